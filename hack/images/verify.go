package main

import (
	"archive/tar"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// Verify reads an OCI image archive back and checks what a cluster relies
// on: one image, tagged; a single entrypoint that exists in the image as an
// executable (an ELF binary unless allowScript); a non-root numeric user;
// the OCI title, version, revision and source labels.
func Verify(archive string, allowScript bool) error {
	dir, err := os.MkdirTemp("", "oci-verify-")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	img, ref, err := ReadArchive(archive, dir)
	if err != nil {
		return err
	}
	var problems []string
	if ref == "" {
		problems = append(problems, "no org.opencontainers.image.ref.name")
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return err
	}
	if u := cfg.Config.User; u == "" || u == "0" || strings.HasPrefix(u, "0:") || strings.HasPrefix(u, "root") {
		problems = append(problems, fmt.Sprintf("user %q is not a non-root numeric user", u))
	}
	for _, l := range []string{"org.opencontainers.image.title", "org.opencontainers.image.version",
		"org.opencontainers.image.revision", "org.opencontainers.image.source"} {
		if cfg.Config.Labels[l] == "" {
			problems = append(problems, "no label "+l)
		}
	}
	if len(cfg.Config.Entrypoint) != 1 {
		problems = append(problems, fmt.Sprintf("entrypoint %q, want one executable", cfg.Config.Entrypoint))
	} else if err := checkExecutable(img, cfg.Config.Entrypoint[0], allowScript); err != nil {
		problems = append(problems, err.Error())
	}
	if len(problems) > 0 {
		return fmt.Errorf("%s: %s", archive, strings.Join(problems, "; "))
	}
	return nil
}

// checkExecutable finds file in img's layers and checks it is executable.
func checkExecutable(img v1.Image, file string, allowScript bool) error {
	layers, err := img.Layers()
	if err != nil {
		return err
	}
	for _, l := range layers {
		rc, err := l.Uncompressed()
		if err != nil {
			return err
		}
		tr := tar.NewReader(rc)
		for {
			hdr, err := tr.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				_ = rc.Close()
				return err
			}
			if "/"+strings.TrimPrefix(hdr.Name, "./") != file {
				continue
			}
			head := make([]byte, 4)
			_, _ = io.ReadFull(tr, head)
			_ = rc.Close()
			switch {
			case hdr.Mode&0o111 == 0:
				return fmt.Errorf("entrypoint %s is not executable (mode %o)", file, hdr.Mode)
			case !allowScript && !bytes.Equal(head, []byte("\x7fELF")):
				return fmt.Errorf("entrypoint %s is not an ELF binary", file)
			}
			return nil
		}
		_ = rc.Close()
	}
	return fmt.Errorf("entrypoint %s is not in the image", file)
}
