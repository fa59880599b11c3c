package browser_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/betaport/betaport/app/api"
)

// An admin makes an access token on the settings page with the keyboard
// and the pointer, copies its secret once, and a script uses it within its
// scopes; the admin revokes it there, and the script is refused at once.
func TestSettingsAccessTokens(t *testing.T) {
	t.Parallel()
	m, d := startService(t)
	ext := d.Extensions[1]
	ctx := adminTab(t, m, d)
	openApp(t, ctx, fmt.Sprintf("%s/extensions/%d/settings", m.URL(), ext.ID))
	waitJS(t, ctx, `document.querySelector('#token-form') !== null && document.querySelector('#tokens-list') !== null`)

	// A name, then the testers scope ticked beside read (read is ticked to
	// start with), the lifetime left at 90 days, and Enter.
	do(t, ctx, chromedp.Click(chromedp.CSS(`#token-name`)), chromedp.KeyEvent("nightly invites"))
	do(t, ctx, chromedp.Click(chromedp.CSS(`#scope-testers`)))
	waitJS(t, ctx, `document.querySelector('#scope-testers').checked && document.querySelector('#scope-read').checked`)
	do(t, ctx, chromedp.Click(chromedp.CSS(`#token-name`)), chromedp.KeyEvent(kb.Enter))
	waitJS(t, ctx, `document.activeElement && document.activeElement.id === "token-secret"`)
	secret, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('#token-secret').value`))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(secret, "bpt_") {
		t.Fatalf("the secret shown = %q", secret)
	}
	waitJS(t, ctx, `document.querySelector('#token-name').value === ""`)
	waitJS(t, ctx, `document.querySelectorAll('#tokens [data-token]').length === 1`)
	row := text(t, ctx, `#tokens [data-token]`)
	if !strings.Contains(row, "nightly invites") || !strings.Contains(row, "read, testers") || !strings.Contains(row, d.Admins[0].Email) {
		t.Fatalf("the token's row reads %q", row)
	}
	if strings.Contains(row, secret) {
		t.Fatal("the list shows the secret")
	}

	// A script invites with it; a rollback, outside its scopes, is refused.
	bearer := func(method, path string, body string) int {
		req, _ := http.NewRequest(method, m.URL()+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+secret)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if s := bearer("POST", api.TestersPath(ext.ID), `{"email": "scripted@example.com", "name": "S"}`); s != http.StatusCreated {
		t.Fatalf("inviting with the token: %d", s)
	}
	if s := bearer("POST", api.RollbackPath(ext.ID, 1), ``); s != http.StatusForbidden {
		t.Fatalf("a rollback with a read and testers token: %d, want 403", s)
	}

	// Done hides the secret for good.
	do(t, ctx, chromedp.Click(chromedp.CSS(`#token-done`)))
	waitJS(t, ctx, `document.querySelector('#token-secret') === null && document.activeElement.id === "token-name"`)

	// Revoke asks; Yes revokes; the script is refused from then on.
	tok := `#tokens [data-token]`
	do(t, ctx, chromedp.Click(chromedp.CSS(tok+` button.revoke`)))
	waitJS(t, ctx, `document.activeElement.classList.contains("confirm-revoke")`)
	do(t, ctx, chromedp.Click(chromedp.CSS(tok+` button.confirm-revoke[aria-disabled="false"]`)))
	waitJS(t, ctx, `document.querySelector('#tokens [data-token] .badge-revoked') !== null`)
	if s := bearer("GET", api.TestersPath(ext.ID), ``); s != http.StatusUnauthorized {
		t.Fatalf("the revoked token: %d, want 401", s)
	}
	// Read again after the revoke, the list says when it was used.
	waitJS(t, ctx, `!document.querySelector('#tokens [data-token]').textContent.includes("Never")`)
	checkAccessible(t, ctx, "the settings page's access tokens")
}
