package betaport_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/betaport/betaport/app/betaport"
)

func TestValidate(t *testing.T) {
	for _, c := range []struct {
		name  string
		v     interface{ Validate() error }
		param string // "" when valid
	}{
		{"team", &betaport.Team{Name: "Acme", Plan: betaport.PlanProfessional, Seats: 1}, ""},
		{"team without a name", &betaport.Team{Name: "  ", Plan: betaport.PlanStarter, Seats: 1}, "name"},
		{"team on no plan", &betaport.Team{Name: "Acme", Plan: "gold", Seats: 1}, "plan"},
		{"team without seats", &betaport.Team{Name: "Acme", Plan: betaport.PlanStarter}, "seats"},
		{"extension", &betaport.Extension{Name: "Tab Tamer"}, ""},
		{"extension without a name", &betaport.Extension{Name: "\t"}, "name"},
		{"tester", &betaport.Tester{Email: "ada@example.com", Status: betaport.TesterInvited}, ""},
		{"tester without @", &betaport.Tester{Email: "ada.example.com", Status: betaport.TesterInvited}, "email"},
		{"tester with a header break", &betaport.Tester{Email: "ada@example.com\r\nBcc: x@y", Status: betaport.TesterInvited}, "email"},
		{"tester with a long name", &betaport.Tester{Email: "ada@example.com", Name: strings.Repeat("n", 201), Status: betaport.TesterInvited}, "email"},
		{"tester of no status", &betaport.Tester{Email: "ada@example.com", Status: "gone"}, "status"},
		{"tester with a control character", &betaport.Tester{Email: "ada@example.com", Name: "Ada\x00", Status: betaport.TesterInvited}, "name"},
		{"key", &betaport.Key{Label: "GitHub Actions", CreatedBy: "ada@example.com"}, ""},
		{"key without a label", &betaport.Key{Label: " ", CreatedBy: "ada@example.com"}, "label"},
		{"key with a NUL", &betaport.Key{Label: "CI\x00", CreatedBy: "ada@example.com"}, "label"},
		{"key on two lines", &betaport.Key{Label: "CI\nprod", CreatedBy: "ada@example.com"}, "label"},
		{"key by nobody", &betaport.Key{Label: "CI"}, "createdBy"},
		{"admin", &betaport.User{Email: "ada@example.com"}, ""},
		{"admin without a domain", &betaport.User{Email: "ada@"}, "email"},
	} {
		err := c.v.Validate()
		switch {
		case c.param == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.param != "" && betaport.ErrorCode(err) != betaport.EINVALID:
			t.Errorf("%s: error %v, want an invalid one", c.name, err)
		case c.param != "" && err.(*betaport.Error).Param != c.param:
			t.Errorf("%s: param %q, want %q", c.name, err.(*betaport.Error).Param, c.param)
		}
	}
	if err := (&betaport.Bundle{ExtensionID: 1, SHA256: "ab"}).Validate(); betaport.ErrorCode(err) != betaport.EINVALID {
		t.Errorf("a bundle without its stored zip: %v", err)
	}
}

func TestNormalizeTester(t *testing.T) {
	tt := &betaport.Tester{Email: "  Ada@Example.COM ", Name: " Ada "}
	tt.Normalize()
	if tt.Email != "ada@example.com" || tt.Name != "Ada" || tt.Status != betaport.TesterInvited {
		t.Fatalf("normalised to %+v", tt)
	}
}

// The browser app links this package: it must stay standard library only.
func TestDomainImportsOnlyTheStandardLibrary(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	if deps := strings.Fields(string(out)); len(deps) != 1 || deps[0] != "github.com/betaport/betaport/app/betaport" {
		t.Fatalf("app/betaport depends on %v; keep it to the standard library", deps)
	}
}
