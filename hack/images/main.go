package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
)

func main() {
	var s Spec
	var out string
	flag.StringVar(&s.Binary, "binary", "", "static executable to ship")
	flag.StringVar(&s.Name, "name", "", "image and executable name (hcp-fleet-hub, hcp-fleet-agent)")
	flag.StringVar(&s.Ref, "ref", "", "reference the archive is tagged with")
	flag.StringVar(&s.Description, "description", "", "org.opencontainers.image.description")
	flag.StringVar(&s.Version, "version", "dev", "org.opencontainers.image.version")
	flag.StringVar(&s.Revision, "revision", "", "org.opencontainers.image.revision (the git commit)")
	flag.StringVar(&s.Arch, "arch", runtime.GOARCH, "the binary's architecture")
	flag.StringVar(&out, "out", "", "the OCI image archive to write")
	flag.StringVar(&s.Assets, "assets", "", "a directory to ship read-only in the image (the console plugin's build)")
	flag.StringVar(&s.AssetsPath, "assets-path", "", "where --assets lands in the image (an absolute directory)")
	verify := flag.Bool("verify", false, "instead of building, read back the OCI image archives given as arguments and check them")
	flag.Parse()
	if *verify {
		failed := false
		for _, archive := range flag.Args() {
			if err := Verify(archive, false); err != nil {
				fmt.Fprintln(os.Stderr, "images:", err)
				failed = true
				continue
			}
			fmt.Printf("%s: entrypoint, non-root user and labels checked\n", archive)
		}
		if failed || flag.NArg() == 0 {
			os.Exit(1)
		}
		return
	}
	if s.Binary == "" || s.Name == "" || s.Ref == "" || out == "" || (s.Assets == "") != (s.AssetsPath == "") {
		fmt.Fprintln(os.Stderr, "images: --binary, --name, --ref and --out are required, --assets and --assets-path go together")
		os.Exit(2)
	}
	img, err := Build(s)
	if err == nil {
		err = WriteArchive(img, s.Ref, out)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "images:", err)
		os.Exit(1)
	}
	digest, _ := img.Digest()
	fmt.Printf("%s: %s (%s)\n", out, s.Ref, digest)
}
