package testenv

import (
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// CopyDir copies the files under from into to (made if missing), each
// with its permissions: data made once per test binary (a migrated
// database, demo data, a data folder with its keys) is given to each test
// as a copy of its own. Unlike os.CopyFS it keeps a key file private
// (0600), as the service that opens the copy expects.
func CopyDir(from, to string) error {
	return filepath.WalkDir(from, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, path)
		dst := filepath.Join(to, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o700)
		}
		return copyFile(path, dst)
	})
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	info, err := in.Stat()
	if err != nil {
		return err
	}
	out, err := os.OpenFile(to, os.O_CREATE|os.O_EXCL|os.O_WRONLY, info.Mode().Perm())
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
