package cli_test

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// bb20VersionLess compares Chromium versions: up to four dot-separated
// integers, missing parts being 0.
func bb20VersionLess(t *testing.T, a, b string) bool {
	t.Helper()
	pa, pb := bb20VersionParts(t, a), bb20VersionParts(t, b)
	for i := 0; i < 4; i++ {
		if pa[i] != pb[i] {
			return pa[i] < pb[i]
		}
	}
	return false
}

func bb20VersionParts(t *testing.T, v string) [4]uint64 {
	t.Helper()
	var out [4]uint64
	parts := strings.Split(v, ".")
	if len(parts) < 1 || len(parts) > 4 {
		t.Fatalf("version %q is not a Chromium version", v)
	}
	for i, p := range parts {
		n, err := strconv.ParseUint(p, 10, 32)
		if err != nil {
			t.Fatalf("version %q is not a Chromium version: %v", v, err)
		}
		out[i] = n
	}
	return out
}

func (e *bb20Env) rollback(t *testing.T, c *http.Client, ext string, n any, hdr map[string]string) (*http.Response, []byte) {
	t.Helper()
	return e.do(t, c, "POST", fmt.Sprintf("/api/extensions/%s/bundles/%v/rollback", ext, n), "", hdr)
}

// bb20CRXFile reads one file of the zip inside a CRX3.
func bb20CRXFile(t *testing.T, crx []byte, name string) string {
	t.Helper()
	if len(crx) < 12 || string(crx[:4]) != "Cr24" || binary.LittleEndian.Uint32(crx[4:]) != 3 {
		t.Fatalf("not a CRX3: % x", crx[:min(12, len(crx))])
	}
	h := binary.LittleEndian.Uint32(crx[8:])
	z := crx[12+h:]
	zr, err := zip.NewReader(bytes.NewReader(z), int64(len(z)))
	if err != nil {
		t.Fatalf("the CRX's zip: %v", err)
	}
	for _, f := range zr.File {
		if f.Name == name {
			rc, _ := f.Open()
			b, _ := io.ReadAll(rc)
			rc.Close()
			return string(b)
		}
	}
	t.Fatalf("the CRX has no %s", name)
	return ""
}

func bb20ZipFile(t *testing.T, z []byte, name string) string {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(z), int64(len(z)))
	if err != nil {
		t.Fatalf("zip: %v", err)
	}
	for _, f := range zr.File {
		if f.Name == name {
			rc, _ := f.Open()
			b, _ := io.ReadAll(rc)
			rc.Close()
			return string(b)
		}
	}
	t.Fatalf("the zip has no %s", name)
	return ""
}

// bb20Feed asks the update feed as Chromium does, reporting version v.
func bb20Feed(t *testing.T, e *bb20Env, ext, v string) string {
	t.Helper()
	resp, b := e.do(t, e.admin, "GET", "/api/extensions/"+ext+"/updates", "", nil)
	if resp.StatusCode != 200 {
		t.Fatalf("updates: %d %s", resp.StatusCode, b)
	}
	var up struct {
		ChromeID  string `json:"chromeId"`
		UpdateURL string `json:"updateUrl"`
	}
	json.Unmarshal(b, &up)
	resp, b = bb20Do(t, http.DefaultClient, "GET", up.UpdateURL+"?x="+urlQuery("id="+up.ChromeID+"&v="+v+"&uc"), nil, nil)
	if resp.StatusCode != 200 {
		t.Fatalf("update check: %d %s", resp.StatusCode, b)
	}
	return string(b)
}

// bb20Consistent checks the numbering of ext's bundles: 1..n, no
// duplicate, versions rising with the number, exactly one current, which
// is what bundles/current answers.
func bb20Consistent(t *testing.T, e *bb20Env, ext string) []bb20Bundle {
	t.Helper()
	list := bb20Bundles(t, e, e.admin, ext)
	sort.Slice(list, func(i, j int) bool { return list[i].Number < list[j].Number })
	currents := 0
	var current int64
	for i, bd := range list {
		if bd.Number != int64(i+1) {
			t.Errorf("bundle numbers are not 1..%d: %v", len(list), bb20Numbers(list))
			break
		}
		if i > 0 && !bb20VersionLess(t, list[i-1].Version, bd.Version) {
			t.Errorf("bundle #%d version %s is not above #%d's %s", bd.Number, bd.Version, list[i-1].Number, list[i-1].Version)
		}
		if bd.Current {
			currents++
			current = bd.Number
		}
	}
	if currents != 1 {
		t.Errorf("%d bundles are current, want one: %v", currents, bb20Numbers(list))
	}
	if cur := bb20Current(t, e, e.admin, ext); cur.Number != current {
		t.Errorf("bundles/current is #%d, the list marks #%d", cur.Number, current)
	}
	return list
}

func bb20Numbers(list []bb20Bundle) []string {
	var out []string
	for _, b := range list {
		s := strconv.FormatInt(b.Number, 10)
		if b.Current {
			s += "*"
		}
		out = append(out, s)
	}
	return out
}

// A rollback publishes a new bundle that serves the old zip, byte for byte,
// under a version above every version served before; the feed offers it; a
// repeat answers the same bundle; rolling back to the current bundle is a
// conflict; it is in the audit trail.
func TestBB20Rollback(t *testing.T) {
	t.Parallel()
	e := bb20Start(t, nil)
	b1 := bb20Publish(t, e, e.keyExt, "1.0.0", "First <b>release</b>")
	b2 := bb20Publish(t, e, e.keyExt, "1.1.0", "")
	b3 := bb20Publish(t, e, e.keyExt, "1.2.0", "Broken")
	if b3.Number != 3 {
		t.Fatalf("third bundle is #%d", b3.Number)
	}

	resp, b := e.rollback(t, e.admin, e.ext, 1, nil)
	if resp.StatusCode != 201 {
		t.Fatalf("rollback to #1 = %d %s, want 201", resp.StatusCode, b)
	}
	rb := bb20DecodeBundle(t, "rollback", b)
	if rb.Number != 4 || rb.RollbackOf != 1 || !rb.Current {
		t.Errorf("rollback answered #%d rollbackOf %d current %v, want #4 rollbackOf 1 current", rb.Number, rb.RollbackOf, rb.Current)
	}
	for _, earlier := range []bb20Bundle{b1, b2, b3} {
		if !bb20VersionLess(t, earlier.Version, rb.Version) {
			t.Errorf("the rollback's version %s is not above #%d's %s", rb.Version, earlier.Number, earlier.Version)
		}
	}
	if rb.VersionName != "1.0.0" {
		t.Errorf("the rollback's versionName %q, want bundle 1's uploaded version 1.0.0", rb.VersionName)
	}
	if rb.SHA256 != b1.SHA256 || rb.Size != b1.Size || rb.Name != b1.Name || rb.ReleaseNotes != b1.ReleaseNotes {
		t.Errorf("the rollback: sha256 %s size %d name %q notes %q; bundle 1: %s %d %q %q",
			rb.SHA256, rb.Size, rb.Name, rb.ReleaseNotes, b1.SHA256, b1.Size, b1.Name, b1.ReleaseNotes)
	}
	if z1, z4 := bb20Download(t, e, e.admin, e.ext, 1), bb20Download(t, e, e.admin, e.ext, 4); !bytes.Equal(z1, z4) {
		t.Errorf("bundle 4's zip (%d bytes) is not bundle 1's (%d bytes)", len(z4), len(z1))
	}
	// The tester downloads it too, as the current bundle.
	resp, zb := e.do(t, e.tester, "GET", "/api/extensions/"+e.ext+"/bundles/current/download", "", nil)
	if resp.StatusCode != 200 || !bytes.Equal(zb, bb20Download(t, e, e.admin, e.ext, 1)) {
		t.Errorf("the tester's current download = %d, %d bytes, not bundle 1's zip", resp.StatusCode, len(zb))
	}
	cur := bb20Current(t, e, e.admin, e.ext)
	if cur.Number != 4 || cur.RollbackOf != 1 {
		t.Errorf("current = #%d rollbackOf %d, want #4 rollbackOf 1", cur.Number, cur.RollbackOf)
	}
	list := bb20Consistent(t, e, e.ext)
	for _, bd := range list {
		if bd.Number == 4 && bd.RollbackOf != 1 {
			t.Errorf("the list shows #4 with rollbackOf %d", bd.RollbackOf)
		}
		if bd.Number != 4 {
			if _, has := bd.Raw["rollbackOf"]; has {
				t.Errorf("the list shows #%d with rollbackOf %s", bd.Number, bd.Raw["rollbackOf"])
			}
		}
	}
	builds := bb20Builds(t, e, e.tester)
	seen := false
	for _, bd := range builds {
		if bd.Number == 4 {
			seen = bd.RollbackOf == 1
		}
	}
	if !seen {
		t.Errorf("the tester's builds do not show #4 as a rollback of #1")
	}

	// The feed announces the new version; its CRX holds the old code.
	feed := bb20Feed(t, e, e.ext, "1.2.0")
	if !strings.Contains(feed, rb.Version) || !strings.Contains(feed, "/crx/4") {
		t.Errorf("the feed for a 1.2.0 install:\n%s\nwant version %s and /crx/4", feed, rb.Version)
	}
	resp, crx := e.do(t, e.admin, "GET", fmt.Sprintf("/api/extensions/%s/bundles/4/crx", e.ext), "", nil)
	if resp.StatusCode != 200 {
		t.Fatalf("CRX #4: %d", resp.StatusCode)
	}
	if got, want := bb20CRXFile(t, crx, "bg.js"), bb20ZipFile(t, bb20Download(t, e, e.admin, e.ext, 1), "bg.js"); got != want {
		t.Errorf("CRX #4's bg.js is not bundle 1's")
	}
	var manifest struct{ Version string }
	json.Unmarshal([]byte(bb20CRXFile(t, crx, "manifest.json")), &manifest)
	if manifest.Version != rb.Version {
		t.Errorf("CRX #4's manifest version %q, want the served %q", manifest.Version, rb.Version)
	}

	// Again (a double click): 200 with the same bundle; {} as the body too.
	for _, body := range []string{"", "{}"} {
		resp, b := e.do(t, e.admin, "POST", "/api/extensions/"+e.ext+"/bundles/1/rollback", body, nil)
		if resp.StatusCode != 200 {
			t.Errorf("rollback to #1 again (body %q) = %d %s, want 200", body, resp.StatusCode, b)
		} else if again := bb20DecodeBundle(t, "again", b); again.Number != 4 || again.Version != rb.Version {
			t.Errorf("rollback to #1 again answered #%d %s, want #4 %s", again.Number, again.Version, rb.Version)
		}
	}
	// Rolling back to the current bundle is a conflict.
	resp, b = e.rollback(t, e.admin, e.ext, 4, nil)
	bb20ProblemOf(t, "rollback to the current #4", resp, b, []int{409}, "/problems/already-current")

	// To #3, the broken one, and on: every version above the last.
	resp, b = e.rollback(t, e.admin, e.ext, 2, nil)
	if resp.StatusCode != 201 {
		t.Fatalf("rollback to #2 = %d %s", resp.StatusCode, b)
	}
	r5 := bb20DecodeBundle(t, "rollback to 2", b)
	if r5.Number != 5 || r5.RollbackOf != 2 || !bb20VersionLess(t, rb.Version, r5.Version) || r5.VersionName != "1.1.0" {
		t.Errorf("rollback to #2 answered #%d rollbackOf %d version %s (%s); want #5 rollbackOf 2 above %s, versionName 1.1.0", r5.Number, r5.RollbackOf, r5.Version, r5.VersionName, rb.Version)
	}
	// A rollback of a rollback: #4 serves #1's zip again.
	resp, b = e.rollback(t, e.admin, e.ext, 4, nil)
	if resp.StatusCode != 201 {
		t.Fatalf("rollback to #4 (itself a rollback) = %d %s", resp.StatusCode, b)
	}
	r6 := bb20DecodeBundle(t, "rollback to 4", b)
	if r6.Number != 6 || r6.SHA256 != b1.SHA256 || !bb20VersionLess(t, r5.Version, r6.Version) {
		t.Errorf("rollback to #4 answered #%d sha %s version %s", r6.Number, r6.SHA256, r6.Version)
	}
	if r6.VersionName != "1.0.0" {
		t.Errorf("rollback to #4: versionName %q; #4 serves 1.0.0's upload", r6.VersionName)
	}
	// A new upload after rollbacks goes above them, whatever its manifest says.
	b7 := bb20Publish(t, e, e.keyExt, "1.3.0", "")
	if b7.Number != 7 || !bb20VersionLess(t, r6.Version, b7.Version) {
		t.Errorf("the upload after rollbacks: #%d version %s, want #7 above %s", b7.Number, b7.Version, r6.Version)
	}
	bb20Consistent(t, e, e.ext)

	// The audit trail names each rollback and who did it.
	resp, b = e.do(t, e.admin, "GET", "/api/extensions/"+e.ext+"/audit?limit=100", "", nil)
	if resp.StatusCode != 200 {
		t.Fatalf("audit: %d %s", resp.StatusCode, b)
	}
	var audit struct {
		Data []struct{ Actor, Action, Subject string }
	}
	json.Unmarshal(b, &audit)
	rollbacks := 0
	for _, a := range audit.Data {
		if a.Action == "bundle.rollback" {
			rollbacks++
			if a.Actor != e.adaEmail {
				t.Errorf("audit: bundle.rollback by %q, want %s", a.Actor, e.adaEmail)
			}
		}
	}
	if rollbacks != 3 {
		t.Errorf("audit has %d bundle.rollback events after 3 rollbacks (and 2 repeats, 1 conflict): %s", rollbacks, b)
	}
}

// Refusals: a missing bundle, another extension's, garbage numbers, a
// tester, nobody, another team's admin, a cross-site request. Each changes
// nothing.
func TestBB20RollbackRefusals(t *testing.T) {
	t.Parallel()
	e := bb20Start(t, nil)
	for _, v := range []string{"1.0.0", "1.1.0", "1.2.0"} {
		bb20Publish(t, e, e.keyExt, v, "")
	}
	bb20Publish(t, e, e.keyExt2, "5.0.0", "") // ext2 has only #1
	bb20Publish(t, e, e.keyExtB, "7.0.0", "") // team B's extension
	bb20Publish(t, e, e.keyExtB, "7.1.0", "")
	before := bb20Bundles(t, e, e.admin, e.ext)
	before2 := bb20Bundles(t, e, e.admin, e.ext2)

	cases := []struct {
		name     string
		c        *http.Client
		ext      string
		n        string
		hdr      map[string]string
		statuses []int
	}{
		{"a missing bundle", e.admin, e.ext, "99", nil, []int{404}},
		{"a bundle number only another extension has", e.admin, e.ext2, "3", nil, []int{404}},
		{"number 0", e.admin, e.ext, "0", nil, []int{404, 400}},
		{"number -1", e.admin, e.ext, "-1", nil, []int{404, 400}},
		{"number abc", e.admin, e.ext, "abc", nil, []int{404, 400}},
		{"number 1.5", e.admin, e.ext, "1.5", nil, []int{404, 400}},
		{"number 1e0", e.admin, e.ext, "1e0", nil, []int{404, 400}},
		{"number 01", e.admin, e.ext, "01", nil, []int{404, 400}},
		{"number +1", e.admin, e.ext, "%2B1", nil, []int{404, 400}},
		{"number 1 with a space", e.admin, e.ext, "%201", nil, []int{404, 400}},
		{"a number past int64", e.admin, e.ext, "99999999999999999999", nil, []int{404, 400}},
		{"number 2^63-1", e.admin, e.ext, "9223372036854775807", nil, []int{404}},
		{"current", e.admin, e.ext, "current", nil, []int{404, 400, 409}},
		{"a missing extension", e.admin, "999999", "1", nil, []int{404, 403}},
		{"another team's extension", e.admin, e.extB, "1", nil, []int{404, 403}},
		{"another team's admin", e.bob, e.ext, "1", nil, []int{404, 403}},
		{"a tester", e.tester, e.ext, "1", nil, []int{403}},
		{"no session", e.anon, e.ext, "1", nil, []int{401}},
		{"a cross-site request", e.admin, e.ext, "1", map[string]string{"Sec-Fetch-Site": "cross-site"}, []int{403}},
	}
	for _, c := range cases {
		resp, b := e.rollback(t, c.c, c.ext, c.n, c.hdr)
		if resp.StatusCode/100 == 2 && (c.n == "01" || c.n == "%2B1") {
			// Leniency, not harm: "01" and "+1" name bundle 1 to strconv.
			t.Logf("rollback with %s = %d (taken as bundle 1)", c.name, resp.StatusCode)
			continue
		}
		bb20ProblemOf(t, "rollback with "+c.name, resp, b, c.statuses, "")
	}
	// A body that is not {} is refused (or ignored), never a 5xx.
	for _, body := range []string{`{"to": 1}`, `not json`, `[]`} {
		resp, b := e.do(t, e.admin, "POST", "/api/extensions/"+e.ext+"/bundles/1/rollback", body, nil)
		if resp.StatusCode >= 500 {
			t.Errorf("rollback with body %q = %d %s", body, resp.StatusCode, b)
		}
		if resp.StatusCode == 201 {
			// Undo by counting: the rest of the test expects one rollback at most.
			t.Logf("rollback with body %q = 201", body)
		}
	}
	after := bb20Bundles(t, e, e.admin, e.ext)
	grew := len(after) - len(before)
	if grew > 1 {
		t.Errorf("refused rollbacks published %d bundles", grew)
	}
	if after2 := bb20Bundles(t, e, e.admin, e.ext2); len(after2) != len(before2) {
		t.Errorf("ext2's bundles changed: %d → %d", len(before2), len(after2))
	}
	if listB := bb20Bundles(t, e, e.bob, e.extB); len(listB) != 2 || !listB[0].Current && !listB[1].Current {
		t.Errorf("team B's bundles changed: %v", bb20Numbers(listB))
	}
	if grew == 0 {
		if cur := bb20Current(t, e, e.admin, e.ext); cur.Number != 3 {
			t.Errorf("after refused rollbacks the current bundle is #%d, want #3", cur.Number)
		}
	}
	bb20Consistent(t, e, e.ext)

	// The CLI: a missing bundle exits 1 with one line.
	code, out, errOut := run(t, "bundle", "rollback", "--data", e.data, "--extension", e.ext, "--to", "99")
	if code != 1 || strings.Count(strings.TrimSpace(errOut), "\n") != 0 || strings.TrimSpace(errOut) == "" || out != "" {
		t.Errorf("bundle rollback --to 99: exit %d, stdout %q, stderr %q; want exit 1 and one line", code, out, errOut)
	}
	// And a real one prints the new bundle as JSON.
	code, out, errOut = run(t, "bundle", "rollback", "--data", e.data, "--extension", e.ext, "--to", "2")
	if code != 0 {
		t.Fatalf("bundle rollback --to 2: exit %d: %s", code, errOut)
	}
	cliB := bb20DecodeBundle(t, "bundle rollback", []byte(out))
	if cliB.RollbackOf != 2 || cliB.Number != int64(len(after)+1) || !cliB.Current {
		t.Errorf("bundle rollback printed #%d rollbackOf %d, want #%d rollbackOf 2, current", cliB.Number, cliB.RollbackOf, len(after)+1)
	}
	if cur := bb20Current(t, e, e.admin, e.ext); cur.Number != cliB.Number {
		t.Errorf("after the CLI rollback the service's current is #%d, want #%d", cur.Number, cliB.Number)
	}
	resp, b := e.do(t, e.admin, "GET", "/api/extensions/"+e.ext+"/audit?limit=100", "", nil)
	if resp.StatusCode != 200 || !bytes.Contains(b, []byte(`"bundle.rollback"`)) {
		t.Errorf("the audit trail lacks the command line's rollback: %s", b)
	}
	var audit struct {
		Data []struct{ Actor, Action string }
	}
	json.Unmarshal(b, &audit)
	if len(audit.Data) == 0 || audit.Data[0].Action != "bundle.rollback" || audit.Data[0].Actor != "command line" {
		t.Errorf("the newest audit event is %+v, want bundle.rollback by command line", audit.Data[:min(1, len(audit.Data))])
	}
}

// Racing rollbacks to the same bundle publish exactly one.
func TestBB20RollbackDoubleClick(t *testing.T) {
	t.Parallel()
	e := bb20Start(t, nil)
	for _, v := range []string{"1.0.0", "1.1.0"} {
		bb20Publish(t, e, e.keyExt, v, "")
	}
	for round, to := range []int64{1, 2, 1} {
		const n = 8
		var wg sync.WaitGroup
		statuses := make([]int, n)
		numbers := make([]int64, n)
		start := make(chan struct{})
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				<-start
				req, _ := http.NewRequest("POST", fmt.Sprintf("%s/api/extensions/%s/bundles/%d/rollback", e.base, e.ext, to), nil)
				resp, err := e.admin.Do(req)
				if err != nil {
					return
				}
				defer resp.Body.Close()
				statuses[i] = resp.StatusCode
				var bd bb20Bundle
				json.NewDecoder(resp.Body).Decode(&bd)
				numbers[i] = bd.Number
			}(i)
		}
		close(start)
		wg.Wait()
		created := 0
		for i := range statuses {
			switch statuses[i] {
			case 201:
				created++
			case 200:
			default:
				t.Errorf("round %d: a racing rollback answered %d", round, statuses[i])
			}
			if numbers[i] != numbers[0] {
				t.Errorf("round %d: racing rollbacks answered bundles %v", round, numbers)
				break
			}
		}
		if created != 1 {
			t.Errorf("round %d: %d racing rollbacks answered 201 (%v), want exactly one", round, created, statuses)
		}
		list := bb20Consistent(t, e, e.ext)
		if want := 3 + round; len(list) != want {
			t.Errorf("round %d: %d bundles after 8 racing rollbacks to #%d, want %d: %v", round, len(list), to, want, bb20Numbers(list))
		}
	}
}

// A sign racing a rollback: whatever the order, numbers 1..n without
// duplicates, versions rising with the numbers, exactly one current.
func TestBB20RollbackRacingSign(t *testing.T) {
	t.Parallel()
	e := bb20Start(t, nil)
	bb20Publish(t, e, e.keyExt, "1.0.0", "")
	bb20Publish(t, e, e.keyExt, "1.1.0", "")
	for round := 0; round < 6; round++ {
		bb20Upload(t, e, e.keyExt, fmt.Sprintf("2.%d.0", round), nil)
		var wg sync.WaitGroup
		var signStatus, rbStatus int
		var signBody, rbBody []byte
		start := make(chan struct{})
		wg.Add(2)
		go func() {
			defer wg.Done()
			<-start
			req, _ := http.NewRequest("POST", e.base+"/api/submit/sign", bytes.NewReader(bb20UploadBody(e.keyExt, nil)))
			req.Header.Set("Content-Type", "application/json")
			if resp, err := http.DefaultClient.Do(req); err == nil {
				signStatus = resp.StatusCode
				signBody, _ = io.ReadAll(resp.Body)
				resp.Body.Close()
			}
		}()
		go func() {
			defer wg.Done()
			<-start
			req, _ := http.NewRequest("POST", fmt.Sprintf("%s/api/extensions/%s/bundles/1/rollback", e.base, e.ext), nil)
			if resp, err := e.admin.Do(req); err == nil {
				rbStatus = resp.StatusCode
				rbBody, _ = io.ReadAll(resp.Body)
				resp.Body.Close()
			}
		}()
		close(start)
		wg.Wait()
		if signStatus/100 != 2 {
			t.Errorf("round %d: the racing sign = %d %s", round, signStatus, signBody)
		}
		if rbStatus != 201 && rbStatus != 200 {
			t.Errorf("round %d: the racing rollback = %d %s", round, rbStatus, rbBody)
		}
		list := bb20Consistent(t, e, e.ext)
		// Whichever answered last is current.
		sb := bb20DecodeBundle(t, "sign", signBody)
		var rb bb20Bundle
		json.Unmarshal(rbBody, &rb)
		want := max(sb.Number, rb.Number)
		if cur := bb20Current(t, e, e.admin, e.ext); cur.Number != want {
			t.Errorf("round %d: sign made #%d, rollback #%d, current is #%d; want the later one", round, sb.Number, rb.Number, cur.Number)
		}
		if sb.Number == rb.Number {
			t.Errorf("round %d: sign and rollback both answered #%d", round, sb.Number)
		}
		if t.Failed() {
			t.Fatalf("round %d: %v", round, bb20Numbers(list))
		}
	}
}

// A pipeline that retries its sign after an admin rolled back gets its own
// bundle again (sign is idempotent), and the rollback stays current: a
// retry must not undo the rollback.
func TestBB20RollbackThenRetriedSign(t *testing.T) {
	t.Parallel()
	e := bb20Start(t, nil)
	bb20Publish(t, e, e.keyExt, "1.0.0", "")
	b2 := bb20Publish(t, e, e.keyExt, "1.1.0", "")
	resp, b := e.rollback(t, e.admin, e.ext, 1, nil)
	if resp.StatusCode != 201 {
		t.Fatalf("rollback = %d %s", resp.StatusCode, b)
	}
	rb := bb20DecodeBundle(t, "rollback", b)
	resp, b = bb20Sign(t, e, e.keyExt)
	if resp.StatusCode != 200 {
		t.Errorf("the retried sign = %d %s, want 200 with bundle #%d", resp.StatusCode, b, b2.Number)
	} else if again := bb20DecodeBundle(t, "retried sign", b); again.Number != b2.Number {
		t.Errorf("the retried sign answered #%d, want #%d", again.Number, b2.Number)
	}
	if cur := bb20Current(t, e, e.admin, e.ext); cur.Number != rb.Number {
		t.Errorf("after a retried sign the current bundle is #%d, want the rollback #%d", cur.Number, rb.Number)
	}
	if list := bb20Consistent(t, e, e.ext); len(list) != 3 {
		t.Errorf("%d bundles, want 3: %v", len(list), bb20Numbers(list))
	}
	// A tester of the extension sees the rollback as the current build.
	if cur := bb20Current(t, e, e.tester, e.ext); cur.Number != rb.Number || cur.RollbackOf != 1 {
		t.Errorf("the tester's current bundle: #%d rollbackOf %d", cur.Number, cur.RollbackOf)
	}
}

// Version edges: a rollback's versionName is the version the old upload's
// manifest gave, even when the service served it under a derived version;
// when no higher version exists, the rollback is refused with a problem
// and nothing changes (never a 5xx).
func TestBB20RollbackVersionEdges(t *testing.T) {
	t.Parallel()
	e := bb20Start(t, nil)
	b1 := bb20Publish(t, e, e.keyExt, "2.0.0", "")
	b2 := bb20Publish(t, e, e.keyExt, "2.0.0", "") // the same manifest version again
	if !bb20VersionLess(t, b1.Version, b2.Version) {
		t.Fatalf("a second upload of 2.0.0 is served as %s after %s", b2.Version, b1.Version)
	}
	bb20Publish(t, e, e.keyExt, "2.1.0", "")
	resp, b := e.rollback(t, e.admin, e.ext, b2.Number, nil)
	if resp.StatusCode != 201 {
		t.Fatalf("rollback to #%d = %d %s", b2.Number, resp.StatusCode, b)
	}
	if rb := bb20DecodeBundle(t, "rollback", b); rb.VersionName != "2.0.0" {
		t.Errorf("rollback to #%d (served as %s, uploaded as 2.0.0): versionName %q, want 2.0.0", b2.Number, b2.Version, rb.VersionName)
	}

	// The highest version there is.
	top := bb20Publish(t, e, e.keyExt, "65535.65535.65535.65535", "")
	if top.Version != "65535.65535.65535.65535" {
		t.Logf("the top version was served as %s", top.Version)
	}
	before := bb20Bundles(t, e, e.admin, e.ext)
	resp, b = e.rollback(t, e.admin, e.ext, 1, nil)
	switch {
	case resp.StatusCode >= 500:
		t.Errorf("rollback above the highest version = %d %s; want a problem that says why", resp.StatusCode, b)
	case resp.StatusCode == 201:
		rb := bb20DecodeBundle(t, "rollback", b)
		if !bb20VersionLess(t, top.Version, rb.Version) {
			t.Errorf("rollback after %s served %s: not higher, installed copies would not update", top.Version, rb.Version)
		}
	default:
		bb20ProblemOf(t, "rollback above the highest version", resp, b, []int{resp.StatusCode}, "")
		if after := bb20Bundles(t, e, e.admin, e.ext); len(after) != len(before) {
			t.Errorf("a refused rollback changed the bundles: %d → %d", len(before), len(after))
		}
		t.Logf("rollback above the highest version: %d %s", resp.StatusCode, b)
	}
	bb20Consistent(t, e, e.ext)
}
