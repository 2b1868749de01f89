// Command images builds hcp-fleet's container images — the hub, the agent
// and the console plugin's asset server — as OCI image archives, without a
// container engine: a static binary on an empty base, run as a non-root
// user, with the OCI labels, and for the console the plugin's build as
// read-only files. `make images` and `make console-image` run it once per
// binary; a machine with a container engine can use images/*.Containerfile
// instead.
package main

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// NonRootUser is the user and group the images run as: distroless's
// "nonroot" (a numeric ID, so no /etc/passwd is needed and Kubernetes'
// runAsNonRoot can verify it).
const NonRootUser = "65532:65532"

// Spec describes one image.
type Spec struct {
	// Binary is the static executable to ship.
	Binary string
	// Name is the image's and the executable's name (hcp-fleet-hub,
	// hcp-fleet-agent); the executable lands at /usr/local/bin/<Name>.
	Name string
	// Ref is the reference the archive is tagged with
	// (quay.io/hcp-fleet/hcp-fleet-agent:v0.1.0).
	Ref string
	// Description, Version and Revision fill the OCI labels.
	Description, Version, Revision string
	// Arch is the binary's architecture (GOARCH).
	Arch string
	// Created is the image's creation time; the zero time keeps builds
	// reproducible (the same binary gives the same digest).
	Created time.Time
	// Assets, when set, is a directory copied into the image at
	// AssetsPath: the console plugin's build (console/dist), which
	// hcp-fleet-console serves. Owned by root and read-only, so the
	// non-root server cannot change what it serves.
	Assets, AssetsPath string
}

// Entrypoint is where Spec's binary lands in the image.
func (s Spec) Entrypoint() string { return path.Join("/usr/local/bin", s.Name) }

// Labels are the image's OCI annotations-as-labels.
func (s Spec) Labels() map[string]string {
	return map[string]string{
		"org.opencontainers.image.title":       s.Name,
		"org.opencontainers.image.description": s.Description,
		"org.opencontainers.image.version":     s.Version,
		"org.opencontainers.image.revision":    s.Revision,
		"org.opencontainers.image.source":      "https://github.com/hcp-fleet/hcp-fleet",
		"org.opencontainers.image.vendor":      "hcp-fleet",
		"org.opencontainers.image.ref.name":    s.Ref,
	}
}

// Build builds the image: one layer with the binary, on an empty base.
func Build(s Spec) (v1.Image, error) {
	bin, err := os.ReadFile(s.Binary)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, dir := range []string{"usr/", "usr/local/", "usr/local/bin/", "tmp/"} {
		mode := int64(0o755)
		if dir == "tmp/" {
			mode = 0o1777 // scratch space some libraries expect; mount an emptyDir over it with a read-only root
		}
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: dir, Mode: mode, ModTime: s.Created}); err != nil {
			return nil, err
		}
	}
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: s.Entrypoint()[1:], Mode: 0o755, Size: int64(len(bin)), ModTime: s.Created}); err != nil {
		return nil, err
	}
	if _, err := tw.Write(bin); err != nil {
		return nil, err
	}
	if s.Assets != "" {
		if err := addTree(tw, s.Assets, s.AssetsPath, s.Created); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	layerBytes := buf.Bytes()
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerBytes)), nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, err
	}
	img, err := mutate.AppendLayers(mutate.MediaType(empty.Image, types.OCIManifestSchema1), layer)
	if err != nil {
		return nil, err
	}
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cfg = cfg.DeepCopy()
	cfg.Architecture, cfg.OS = s.Arch, "linux"
	cfg.Created = v1.Time{Time: s.Created}
	cfg.Config.Entrypoint = []string{s.Entrypoint()}
	cfg.Config.User = NonRootUser
	cfg.Config.WorkingDir = "/"
	cfg.Config.Labels = s.Labels()
	cfg.Config.Env = []string{"PATH=/usr/local/bin"}
	return mutate.ConfigFile(img, cfg)
}

// addTree writes the regular files and directories under src into tw at
// dst (an absolute path in the image), with its parent directories; files
// 0444, directories 0555, all root's. Symlinks and other files are refused:
// a build has none, and one could point outside the tree.
func addTree(tw *tar.Writer, src, dst string, created time.Time) error {
	if !path.IsAbs(dst) || path.Clean(dst) != dst || dst == "/" {
		return fmt.Errorf("assets path %q: want a clean absolute directory", dst)
	}
	// Parents of dst, other than those Build writes.
	var parents []string
	for d := path.Dir(dst); d != "/"; d = path.Dir(d) {
		parents = append([]string{d}, parents...)
	}
	for _, d := range parents {
		if d == "/usr" || d == "/usr/local" || d == "/usr/local/bin" {
			continue
		}
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: d[1:] + "/", Mode: 0o755, ModTime: created}); err != nil {
			return err
		}
	}
	return filepath.WalkDir(src, func(file string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, file)
		if err != nil {
			return err
		}
		name := path.Join(dst, filepath.ToSlash(rel))[1:]
		switch {
		case d.IsDir():
			return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: name + "/", Mode: 0o555, ModTime: created})
		case d.Type().IsRegular():
			data, err := os.ReadFile(file)
			if err != nil {
				return err
			}
			if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o444, Size: int64(len(data)), ModTime: created}); err != nil {
				return err
			}
			_, err = tw.Write(data)
			return err
		default:
			return fmt.Errorf("%s: not a regular file or directory", file)
		}
	})
}

// WriteArchive writes img as an OCI image archive (a tar of an OCI image
// layout, what `podman load` and `skopeo copy oci-archive:` read), tagged
// with ref.
func WriteArchive(img v1.Image, ref, archive string) error {
	dir, err := os.MkdirTemp("", "oci-layout-")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return err
	}
	if err := p.AppendImage(img, layout.WithAnnotations(map[string]string{"org.opencontainers.image.ref.name": ref})); err != nil {
		return err
	}
	out, err := os.Create(archive)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(out)
	err = filepath.WalkDir(dir, func(file string, d fs.DirEntry, err error) error {
		if err != nil || file == dir {
			return err
		}
		rel, err := filepath.Rel(dir, file)
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		hdr, err := tar.FileInfoHeader(info, "")
		if err != nil {
			return err
		}
		hdr.Name, hdr.ModTime = filepath.ToSlash(rel), time.Time{}
		hdr.Uid, hdr.Gid, hdr.Uname, hdr.Gname = 0, 0, "", ""
		if d.IsDir() {
			hdr.Name += "/"
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		f, err := os.Open(file)
		if err != nil {
			return err
		}
		defer func() { _ = f.Close() }()
		_, err = io.Copy(tw, f)
		return err
	})
	if err == nil {
		err = tw.Close()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", archive, err)
	}
	return nil
}

// ReadArchive reads back the image an OCI image archive holds and the
// reference it is tagged with, unpacking it into dir (which must outlive
// the image: its layers are read from there).
func ReadArchive(archive, dir string) (v1.Image, string, error) {
	f, err := os.Open(archive)
	if err != nil {
		return nil, "", err
	}
	defer func() { _ = f.Close() }()
	tr := tar.NewReader(f)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, "", err
		}
		target := filepath.Join(dir, filepath.FromSlash(path.Clean("/"+hdr.Name))) // never outside dir
		if hdr.Typeflag == tar.TypeDir {
			if err := os.MkdirAll(target, 0o755); err != nil {
				return nil, "", err
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return nil, "", err
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			return nil, "", err
		}
		if err := os.WriteFile(target, b, 0o644); err != nil {
			return nil, "", err
		}
	}
	idx, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		return nil, "", err
	}
	m, err := idx.IndexManifest()
	if err != nil {
		return nil, "", err
	}
	if len(m.Manifests) != 1 {
		return nil, "", fmt.Errorf("%s holds %d images, want 1", archive, len(m.Manifests))
	}
	img, err := idx.Image(m.Manifests[0].Digest)
	if err != nil {
		return nil, "", err
	}
	return img, m.Manifests[0].Annotations["org.opencontainers.image.ref.name"], nil
}
