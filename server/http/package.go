package http

import (
	"context"
	"errors"
	"fmt"
	"io"

	"gocloud.dev/blob"

	"github.com/betaport/betaport/server/publish"
)

// packageReader reads a tester's copy of a CRX (publish.Package): its
// header, the shared part read from storage as it is needed (one ranged
// read from where a seek left it), and its tail. It seeks, so that
// http.ServeContent answers Range requests.
type packageReader struct {
	ctx   context.Context
	blobs *blob.Bucket
	p     *publish.Package

	pos   int64
	rd    io.ReadCloser // the shared part, from rdPos
	rdPos int64
}

func (r *packageReader) Seek(offset int64, whence int) (int64, error) {
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		offset += r.pos
	case io.SeekEnd:
		offset += r.p.Size
	default:
		return 0, errors.New("packageReader: bad whence")
	}
	if offset < 0 {
		return 0, errors.New("packageReader: negative position")
	}
	r.pos = offset
	return offset, nil
}

func (r *packageReader) Read(b []byte) (int, error) {
	header := int64(len(r.p.Header))
	shared := r.p.PrefixTo - r.p.PrefixFrom
	switch {
	case r.pos >= r.p.Size:
		return 0, io.EOF
	case r.pos < header:
		n := copy(b, r.p.Header[r.pos:])
		r.pos += int64(n)
		return n, nil
	case r.pos >= header+shared:
		n := copy(b, r.p.Tail[r.pos-header-shared:])
		r.pos += int64(n)
		return n, nil
	}
	if r.rd == nil || r.rdPos != r.pos {
		r.Close()
		rd, err := r.blobs.NewRangeReader(r.ctx, r.p.BlobKey, r.p.PrefixFrom+r.pos-header, header+shared-r.pos, nil)
		if err != nil {
			return 0, fmt.Errorf("reading %s: %w", r.p.BlobKey, err)
		}
		r.rd, r.rdPos = rd, r.pos
	}
	n, err := r.rd.Read(b[:min(int64(len(b)), header+shared-r.pos)])
	r.pos += int64(n)
	r.rdPos += int64(n)
	if err == io.EOF {
		if r.pos < header+shared {
			return n, io.ErrUnexpectedEOF
		}
		err = nil
	}
	return n, err
}

// Close ends the read of the shared part under way.
func (r *packageReader) Close() error {
	if r.rd == nil {
		return nil
	}
	err := r.rd.Close()
	r.rd = nil
	return err
}
