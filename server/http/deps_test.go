package http_test

import (
	"os/exec"
	"strings"
	"testing"
)

// The HTTP layer decodes, calls package publish and encodes: zip reading,
// validation and CRX packing live in publish (and zipcheck, crx), so that a
// submission is followed in one place. A handler that reached for them
// directly would start a second home for the pipeline.
func TestHTTPLeavesZipsAndCRXToPublish(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-f", `{{join .Imports "\n"}}`, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	imports := strings.Fields(string(out))
	if len(imports) < 10 {
		t.Fatalf("go list found only %d imports; the check is not looking at the package", len(imports))
	}
	forbidden := map[string]bool{
		"archive/zip": true,
		"github.com/betaport/betaport/server/crx":      true,
		"github.com/betaport/betaport/server/zipcheck": true,
	}
	for _, imp := range imports {
		if forbidden[imp] {
			t.Errorf("server/http imports %s; call package publish instead", imp)
		}
	}
}
