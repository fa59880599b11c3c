package http_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/server/storetest"
)

// A Go client generated from the served document with oapi-codegen (the
// version go.mod's tool line pins) builds, and works: a program using it
// signs in, lists the extensions and reads a problem. Issue 28 found the
// generator refusing the document (extensionId as a type array).
func TestGeneratedGoClientWorks(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	team := storetest.MustTeam(t, e.DB, betaport.PlanProfessional)
	ext := storetest.MustExtension(t, e.DB, team, "Tab Tamer")
	admin := &betaport.User{TeamID: team.ID, Email: uniqueEmail("generated-client")}
	if err := e.DB.CreateUser(context.Background(), admin, adminPasswordHash()); err != nil {
		t.Fatal(err)
	}

	dir := t.TempDir()
	resp, spec := e.do(t, "GET", "/api/openapi.json", nil)
	if resp.StatusCode != 200 {
		t.Fatalf("/api/openapi.json = %d", resp.StatusCode)
	}
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("openapi.json", string(spec))
	write("go.mod", "module example.com/betaportclient\n\ngo 1.26\n\nrequire github.com/oapi-codegen/runtime v1.9.0\n")
	write("main.go", generatedClientProgram)

	// The generator runs from this module, where go.mod pins it; the
	// client is a module of its own, as a user's would be.
	run := func(dir string, args ...string) string {
		t.Helper()
		cmd := exec.Command("go", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	run(".", "tool", "oapi-codegen", "-generate", "types,client", "-package", "main",
		"-o", filepath.Join(dir, "client.go"), filepath.Join(dir, "openapi.json"))
	run(dir, "mod", "tidy")
	run(dir, "vet", ".")
	out := run(dir, "run", ".", e.URL, admin.Email, "a long password")

	want := "signed in\n" +
		"extension " + strconv.FormatInt(ext.ID, 10) + " Tab Tamer\n" +
		"problem 404 /problems/not-found\n"
	if out != want {
		t.Errorf("the generated client's program printed\n%s\nwant\n%s", out, want)
	}
}

// generatedClientProgram uses the generated client as a user would.
const generatedClientProgram = `package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/cookiejar"
	"os"
)

func main() {
	jar, _ := cookiejar.New(nil)
	c, err := NewClientWithResponses(os.Args[1], WithHTTPClient(&http.Client{Jar: jar}))
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	in, err := c.SignInWithResponse(ctx, SignIn{Email: os.Args[2], Password: os.Args[3]})
	if err != nil || in.StatusCode() != 200 {
		fmt.Println("sign-in failed:", err, string(in.Body))
		os.Exit(1)
	}
	fmt.Println("signed in")
	list, err := c.ListExtensionsWithResponse(ctx)
	if err != nil || list.JSON200 == nil {
		fmt.Println("listing failed:", err, string(list.Body))
		os.Exit(1)
	}
	for _, e := range *list.JSON200 {
		fmt.Println("extension", e.Id, e.Name)
	}
	missing, err := c.GetExtensionWithResponse(ctx, 1<<40)
	if err != nil || missing.ApplicationproblemJSONDefault == nil {
		fmt.Println("no problem decoded:", err, string(missing.Body))
		os.Exit(1)
	}
	fmt.Println("problem", missing.ApplicationproblemJSONDefault.Status, missing.ApplicationproblemJSONDefault.Type)
}
`
