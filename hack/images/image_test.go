package main

import (
	"archive/tar"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestArchiveRoundTrip builds an image the way `make images` does (here from
// a small stand-in executable: what is checked is the image around it),
// writes the OCI archive, reads it back and checks what a cluster runs:
// entrypoint, non-root user, labels, and the executable itself.
func TestArchiveRoundTrip(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "hcp-fleet-agent")
	content := []byte("#!/bin/false\nnot really a Go binary\n")
	if err := os.WriteFile(bin, content, 0o755); err != nil {
		t.Fatal(err)
	}
	spec := Spec{Binary: bin, Name: "hcp-fleet-agent", Ref: "quay.io/hcp-fleet/hcp-fleet-agent:v0.0.1-test",
		Description: "the agent", Version: "v0.0.1-test", Revision: "abc123", Arch: "amd64"}
	img, err := Build(spec)
	if err != nil {
		t.Fatal(err)
	}
	archive := filepath.Join(dir, "agent.oci.tar")
	if err := WriteArchive(img, spec.Ref, archive); err != nil {
		t.Fatal(err)
	}

	got, ref, err := ReadArchive(archive, filepath.Join(dir, "unpacked"))
	if err != nil {
		t.Fatal(err)
	}
	if ref != spec.Ref {
		t.Errorf("ref %q, want %q", ref, spec.Ref)
	}
	built, _ := img.Digest()
	if read, err := got.Digest(); err != nil || read != built {
		t.Errorf("digest read back %s (%v), built %s", read, err, built)
	}
	cfg, err := got.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Config.Entrypoint) != 1 || cfg.Config.Entrypoint[0] != "/usr/local/bin/hcp-fleet-agent" {
		t.Errorf("entrypoint %q", cfg.Config.Entrypoint)
	}
	if cfg.Config.User != NonRootUser || cfg.Config.User == "" || cfg.Config.User[0] == '0' {
		t.Errorf("user %q, want non-root %s", cfg.Config.User, NonRootUser)
	}
	if cfg.OS != "linux" || cfg.Architecture != "amd64" {
		t.Errorf("platform %s/%s", cfg.OS, cfg.Architecture)
	}
	for k, want := range map[string]string{
		"org.opencontainers.image.title": "hcp-fleet-agent", "org.opencontainers.image.version": "v0.0.1-test",
		"org.opencontainers.image.revision": "abc123", "org.opencontainers.image.source": "https://github.com/hcp-fleet/hcp-fleet",
	} {
		if cfg.Config.Labels[k] != want {
			t.Errorf("label %s = %q, want %q", k, cfg.Config.Labels[k], want)
		}
	}

	// The one layer holds the executable, executable, and nothing of the
	// build machine's.
	layers, err := got.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("%d layers (%v), want 1", len(layers), err)
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = rc.Close() }()
	tr := tar.NewReader(rc)
	found := false
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if hdr.Uid != 0 || hdr.Gid != 0 {
			t.Errorf("%s owned by %d:%d", hdr.Name, hdr.Uid, hdr.Gid)
		}
		if hdr.Name == "usr/local/bin/hcp-fleet-agent" {
			found = true
			b, _ := io.ReadAll(tr)
			if !bytes.Equal(b, content) || hdr.Mode&0o111 == 0 {
				t.Errorf("executable: mode %o, content %q", hdr.Mode, b)
			}
		}
	}
	if !found {
		t.Error("the executable is not in the layer")
	}

	if err := Verify(archive, true); err != nil {
		t.Errorf("Verify: %v", err)
	}
	if err := Verify(archive, false); err == nil || !strings.Contains(err.Error(), "not an ELF binary") {
		t.Errorf("Verify of a script as a binary: %v", err)
	}

	// Reproducible: the same input gives the same digest.
	again, err := Build(spec)
	if err != nil {
		t.Fatal(err)
	}
	d1, _ := img.Digest()
	d2, _ := again.Digest()
	if d1 != d2 {
		t.Errorf("digests differ: %s %s", d1, d2)
	}
}

// The console's image carries the plugin's build read-only, root's, under
// the assets path; a build with a symlink, or a relative path, is refused.
func TestAssetsInImage(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "hcp-fleet-console")
	if err := os.WriteFile(bin, []byte("#!/bin/false\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	assets := filepath.Join(dir, "dist")
	files := map[string]string{"plugin-manifest.json": `{"name":"hcp-fleet"}`, "locales/en/plugin__hcp-fleet.json": `{}`}
	for name, content := range files {
		p := filepath.Join(assets, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	spec := Spec{Binary: bin, Name: "hcp-fleet-console", Ref: "quay.io/hcp-fleet/hcp-fleet-console:test", Arch: "amd64",
		Assets: assets, AssetsPath: "/usr/share/hcp-fleet-console"}
	img, err := Build(spec)
	if err != nil {
		t.Fatal(err)
	}
	layers, err := img.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("%d layers (%v), want 1", len(layers), err)
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = rc.Close() }()
	tr := tar.NewReader(rc)
	seen := map[string]bool{}
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		seen[hdr.Name] = true
		rel, ok := strings.CutPrefix(hdr.Name, "usr/share/hcp-fleet-console/")
		if !ok {
			continue
		}
		if hdr.Uid != 0 || hdr.Mode&0o222 != 0 {
			t.Errorf("%s: owner %d, mode %o: want root's and read-only", hdr.Name, hdr.Uid, hdr.Mode)
		}
		if want, isFile := files[rel]; isFile {
			b, _ := io.ReadAll(tr)
			if string(b) != want {
				t.Errorf("%s: %q, want %q", hdr.Name, b, want)
			}
		}
	}
	for _, want := range []string{"usr/share/", "usr/share/hcp-fleet-console/", "usr/share/hcp-fleet-console/plugin-manifest.json",
		"usr/share/hcp-fleet-console/locales/en/plugin__hcp-fleet.json", "usr/local/bin/hcp-fleet-console"} {
		if !seen[want] {
			t.Errorf("the layer lacks %s", want)
		}
	}

	if err := os.Symlink("/etc/passwd", filepath.Join(assets, "passwd.js")); err != nil {
		t.Fatal(err)
	}
	if _, err := Build(spec); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("a build with a symlink: %v", err)
	}
	spec.AssetsPath = "usr/share/x"
	if _, err := Build(spec); err == nil {
		t.Errorf("a relative assets path: accepted")
	}
}
