package cli

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"gocloud.dev/blob"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/server/blobstore"
	"github.com/betaport/betaport/server/sqlite"
)

// Backup and restore of the embedded default: a SQLite file and local
// blobs in the data dir. A backup is a gzipped tar of a consistent copy of
// the database (VACUUM INTO, taken while the service serves), the data
// dir's secret and signing keyring (without which the CRX signing keys
// cannot be opened), and every blob the copy's records point to. Blobs are
// written before the records that name them and never rewritten, so every
// blob the copy names is whole in storage when it is read. The PostgreSQL +
// S3 deployment is backed up with those systems' own tools (README).

// Names inside a backup.
const (
	backupDB      = "betaport.db"
	backupSecret  = "secret"
	backupKeyring = keyringFile
	backupBlobs   = "blobs/"
)

func backup(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c := DefaultConfig()
	fs := flag.NewFlagSet("backup", flag.ContinueOnError)
	out := fs.String("out", "", "write the backup to this `file` (required); it holds the secret and the signing keyring")
	c.storageFlags(fs)
	if err := parse(fs, args, stderr); err != nil {
		return err
	}
	if *out == "" {
		return usageError{"--out is required"}
	}
	if c.sharedDB() || (c.Blob != "" && !strings.HasPrefix(c.Blob, "file://")) {
		return betaport.Errorf(betaport.EINVALID, "backup copies the embedded default (SQLite and local files). Back up PostgreSQL with pg_dump and S3 with its own tools; see the README, \"Backup and restore\".")
	}
	return withExistingStorage(ctx, c, func(st *Storage) error {
		dir, err := os.MkdirTemp("", "betaport-backup-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		snapshot := filepath.Join(dir, backupDB)
		db, ok := st.Store.(interface {
			BackupTo(context.Context, string) error
		})
		if !ok {
			return errors.New("this store cannot be backed up by betaport")
		}
		if err := db.BackupTo(ctx, snapshot); err != nil {
			return err
		}
		copyDB, err := sqlite.Open(ctx, snapshot)
		if err != nil {
			return err
		}
		live, err := copyDB.LiveBlobs(ctx)
		copyDB.Close()
		if err != nil {
			return err
		}
		n, err := writeBackup(ctx, *out, c.Data, snapshot, st.Blobs, live)
		if err != nil {
			return err
		}
		fmt.Fprintf(stderr, "Wrote %s: the database, the secret, the signing keyring and %d blobs. Keep it as safe as the data dir.\n", *out, n)
		return nil
	})
}

// writeBackup writes the archive and returns how many blobs it holds. It
// is written beside out under a name that says it is partial, and renamed
// to out once whole: a backup killed or failed half-way never stands under
// the backup's name (nor replaces the one there before). Once it stands,
// the partial files that killed backups to the same name left go too.
func writeBackup(ctx context.Context, out, data, snapshot string, blobs *blob.Bucket, live *betaport.LiveBlobs) (n int, err error) {
	began := time.Now()
	f, err := os.CreateTemp(filepath.Dir(out), filepath.Base(out)+partialSuffix+"*")
	if err != nil {
		return 0, err
	}
	defer func() {
		f.Close()
		if err != nil {
			os.Remove(f.Name())
		}
	}()
	if err := f.Chmod(0o600); err != nil {
		return 0, err
	}
	n, err = writeArchive(ctx, f, data, snapshot, blobs, live)
	if err != nil {
		return n, err
	}
	if err := f.Sync(); err != nil {
		return n, err
	}
	if err := f.Close(); err != nil {
		return n, err
	}
	if err := os.Rename(f.Name(), out); err != nil {
		return n, err
	}
	removeKilledPartials(out, began)
	return n, nil
}

// partialSuffix marks a backup being written: out.partial-RANDOM.
const partialSuffix = ".partial-"

// removeKilledPartials removes the partial files beside out that no backup
// has written to since began: what backups killed before this one left
// (each is as large as a backup). A backup to the same name still being
// written has touched its file since, and keeps it.
func removeKilledPartials(out string, began time.Time) {
	dir, prefix := filepath.Dir(out), filepath.Base(out)+partialSuffix
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !e.Type().IsRegular() || !strings.HasPrefix(e.Name(), prefix) {
			continue
		}
		if info, err := e.Info(); err == nil && info.ModTime().Before(began) {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

// writeArchive writes the backup's tar.gz to f.
func writeArchive(ctx context.Context, f *os.File, data, snapshot string, blobs *blob.Bucket, live *betaport.LiveBlobs) (int, error) {
	gz := gzip.NewWriter(f)
	tw := tar.NewWriter(gz)
	for name, path := range map[string]string{backupDB: snapshot, backupSecret: filepath.Join(data, "secret"), backupKeyring: filepath.Join(data, keyringFile)} {
		if err := addFile(tw, name, path); err != nil {
			return 0, err
		}
	}
	n := 0
	for key := range live.Keys {
		r, err := blobs.NewReader(ctx, key, nil)
		if err != nil {
			return n, fmt.Errorf("blob %s: %w", key, err)
		}
		err = tw.WriteHeader(&tar.Header{Name: backupBlobs + key, Mode: 0o600, Size: r.Size(), ModTime: r.ModTime(), Typeflag: tar.TypeReg,
			PAXRecords: map[string]string{"BETAPORT.content_type": r.ContentType()}})
		if err == nil {
			_, err = io.Copy(tw, r)
		}
		r.Close()
		if err != nil {
			return n, err
		}
		n++
	}
	if err := tw.Close(); err != nil {
		return n, err
	}
	return n, gz.Close()
}

func addFile(tw *tar.Writer, name, path string) error {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) && name != backupDB {
		return nil // a data dir that never made one
	} else if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o600, Size: fi.Size(), ModTime: fi.ModTime(), Typeflag: tar.TypeReg}); err != nil {
		return err
	}
	_, err = io.Copy(tw, f)
	return err
}

func restore(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c := DefaultConfig()
	fs := flag.NewFlagSet("restore", flag.ContinueOnError)
	from := fs.String("from", "", "the backup `file` to restore (required)")
	fs.StringVar(&c.Data, "data", env("BETAPORT_DATA", c.Data), "the empty data `directory` to restore into (env BETAPORT_DATA)")
	if err := parse(fs, args, stderr); err != nil {
		return err
	}
	if *from == "" {
		return usageError{"--from is required"}
	}
	if entries, err := os.ReadDir(c.Data); err == nil && len(entries) > 0 {
		return betaport.Errorf(betaport.ECONFLICT, "%s is not empty: restore only into an empty data dir, then serve from it.", c.Data)
	}
	// Into a folder beside the data dir, renamed to it once whole: a
	// refused or cut backup leaves nothing behind.
	parent := filepath.Dir(filepath.Clean(c.Data))
	if err := os.MkdirAll(parent, 0o700); err != nil {
		return err
	}
	work, err := os.MkdirTemp(parent, ".betaport-restore-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	n, err := readBackup(ctx, *from, work)
	if err != nil {
		return fmt.Errorf("restoring %s: %w; nothing was restored", *from, err)
	}
	ended, err := endPendingUploads(ctx, filepath.Join(work, backupDB))
	if err != nil {
		return fmt.Errorf("restoring %s: %w; nothing was restored", *from, err)
	}
	os.Remove(c.Data) // empty, or absent
	if err := os.Rename(work, c.Data); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "Restored %s into %s: the database, the secret, the signing keyring and %d blobs. Serve it with betaport serve --data %s.\n", *from, c.Data, n, c.Data)
	if ended > 0 {
		fmt.Fprintf(stderr, "%d upload(s) under way at the backup were ended: the backup holds no unpublished zip, so their pipelines request a new upload URL (sign answers 410).\n", ended)
	}
	return nil
}

// endPendingUploads ends the uploads of the restored database at path that
// wait for a zip or a sign: a backup holds no zip of theirs, and a sign of
// one would find nothing to read (issue 29: it answered 500).
func endPendingUploads(ctx context.Context, path string) (int64, error) {
	db, err := sqlite.Open(ctx, path)
	if err != nil {
		return 0, err
	}
	defer db.Close()
	return db.EndPendingUploads(ctx)
}

func readBackup(ctx context.Context, from, data string) (int, error) {
	f, err := os.Open(from)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		return 0, fmt.Errorf("not a betaport backup: %w", err)
	}
	blobURL, err := blobstore.FileURL(filepath.Join(data, "blobs"))
	if err != nil {
		return 0, err
	}
	bucket, err := blobstore.Open(ctx, blobURL)
	if err != nil {
		return 0, err
	}
	defer bucket.Close()
	tr := tar.NewReader(gz)
	n, sawDB := 0, false
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		} else if err != nil {
			return n, fmt.Errorf("not a betaport backup: %w", err)
		}
		switch name := h.Name; {
		case name == backupDB || name == backupSecret || name == backupKeyring:
			sawDB = sawDB || name == backupDB
			if err := writeNewFile(filepath.Join(data, name), tr); err != nil {
				return n, err
			}
		case strings.HasPrefix(name, backupBlobs) && !strings.Contains(name, ".."):
			key := strings.TrimPrefix(name, backupBlobs)
			ct := h.PAXRecords["BETAPORT.content_type"]
			if ct == "" {
				ct = api.ZipContentType
			}
			if err := bucket.Upload(ctx, key, tr, &blob.WriterOptions{ContentType: ct}); err != nil {
				return n, err
			}
			n++
		default:
			return n, fmt.Errorf("not a betaport backup: it holds %q", name)
		}
	}
	if !sawDB {
		return n, errors.New("not a betaport backup: it holds no database")
	}
	return n, nil
}

// writeNewFile writes a file that must not exist yet.
func writeNewFile(path string, r io.Reader) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
