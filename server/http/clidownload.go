package http

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"os"
	"runtime"
	"sync"
	"time"

	"github.com/betaport/betaport/app/api"
)

// The betaport command, offered for download by the service that runs it:
// a pipeline gets the CLI of the service it talks to in one request
// (README, "GitHub Actions"), for the service's own platform, with its
// SHA-256 beside it to check.

// PathCLI is the command's download; PathCLI + ".sha256" its checksum, as
// sha256sum -c reads it.
const PathCLI = "/cli/betaport"

// cliFile is the binary offered and its checksum, read once.
type cliFile struct {
	once sync.Once
	sum  string
	err  error
}

func (s *Server) cliSum() (string, error) {
	s.cli.once.Do(func() {
		f, err := os.Open(s.CLIBinary)
		if err != nil {
			s.cli.err = err
			return
		}
		defer f.Close()
		h := sha256.New()
		if _, err := io.Copy(h, f); err != nil {
			s.cli.err = err
			return
		}
		s.cli.sum = hex.EncodeToString(h.Sum(nil))
	})
	return s.cli.sum, s.cli.err
}

// cliPlatform is the platform of the binary offered: the service's own.
func cliPlatform() string { return runtime.GOOS + "/" + runtime.GOARCH }

func (s *Server) cliOffered(w http.ResponseWriter, r *http.Request) (string, bool) {
	if s.CLIBinary == "" {
		writeProblem(w, problem(http.StatusNotFound, api.ProblemNotFound,
			"This service offers no download of the betaport command (it was not started by it). Build it with make build, or take an archive made by make dist."))
		return "", false
	}
	sum, err := s.cliSum()
	if err != nil {
		s.Error(w, r, err)
		return "", false
	}
	w.Header().Set("X-Betaport-Platform", cliPlatform())
	return sum, true
}

// handleCLI sends the betaport command, for the service's platform.
func (s *Server) handleCLI(w http.ResponseWriter, r *http.Request, _ *subject) {
	sum, ok := s.cliOffered(w, r)
	if !ok {
		return
	}
	f, err := os.Open(s.CLIBinary)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	defer f.Close()
	h := w.Header()
	h.Set("Content-Type", "application/octet-stream")
	h.Set("Content-Disposition", `attachment; filename="betaport"`)
	h.Set("ETag", `"`+sum+`"`)
	h.Set("Cache-Control", "no-cache")
	http.ServeContent(w, r, "", time.Time{}, f)
}

// handleCLISum sends the command's SHA-256, as "SUM  betaport".
func (s *Server) handleCLISum(w http.ResponseWriter, r *http.Request, _ *subject) {
	sum, ok := s.cliOffered(w, r)
	if !ok {
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	io.WriteString(w, sum+"  betaport\n")
}
