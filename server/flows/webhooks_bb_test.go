package flows_test

// Black-box flows of the settings page's webhooks section (model.Webhooks)
// against the real service, with receivers on loopback (httptest).

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/app/client"
	"github.com/betaport/betaport/app/model"
	"github.com/betaport/betaport/server/cli"
	"github.com/betaport/betaport/server/demo"
)

// bbsWebhookService is service() with webhooks allowed to reach loopback
// (the receivers are httptest servers) and a short first retry.
func bbsWebhookService(t *testing.T) (*cli.Main, *demo.Result) {
	t.Helper()
	return serviceWith(t, func(m *cli.Main) {
		m.Config.WebhookAllowPrivate = true
		m.Config.WebhookRetryMin = 100 * time.Millisecond
	})
}

// bbsReceiver is a webhook receiver: it answers status with body and
// keeps what it was sent.
type bbsReceiver struct {
	*httptest.Server
	status atomic.Int64
	body   atomic.Value // string

	mu   sync.Mutex
	got  []bbsReceived
	hits atomic.Int64
}

type bbsReceived struct {
	header http.Header
	body   []byte
	uri    string
}

func bbsNewReceiver(t *testing.T, status int, body string) *bbsReceiver {
	t.Helper()
	r := &bbsReceiver{}
	r.status.Store(int64(status))
	r.body.Store(body)
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.got = append(r.got, bbsReceived{req.Header.Clone(), b, req.URL.RequestURI()})
		r.mu.Unlock()
		r.hits.Add(1)
		w.WriteHeader(int(r.status.Load()))
		io.WriteString(w, r.body.Load().(string))
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *bbsReceiver) Received() []bbsReceived {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]bbsReceived(nil), r.got...)
}

// bbsVerify checks Betaport-Signature as the README tells receivers to.
func bbsVerify(secret, header string, body []byte) bool {
	var ts, v1 string
	for _, kv := range strings.Split(header, ",") {
		switch k, v, _ := strings.Cut(kv, "="); k {
		case "t":
			ts = v
		case "v1":
			v1 = v
		}
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || time.Since(time.Unix(sec, 0)).Abs() > 5*time.Minute {
		return false
	}
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(ts + "." + string(body)))
	return hmac.Equal([]byte(v1), []byte(hex.EncodeToString(m.Sum(nil))))
}

type bbsHooksSpy struct {
	focus []struct {
		f  model.WebhooksFocus
		id int64
	}
	cleared   int
	copied    []string
	copyOK    bool
	signedOut int
}

func bbsOpenWebhooks(t *testing.T, p *bbsPage, id int64) (*model.Webhooks, *bbsHooksSpy) {
	t.Helper()
	spy := &bbsHooksSpy{copyOK: true}
	var w *model.Webhooks
	p.Do(func() {
		w = model.NewWebhooks(model.WebhooksConfig{
			Env:         p.env,
			ExtensionID: id,
			Focus: func(f model.WebhooksFocus, id int64) {
				spy.focus = append(spy.focus, struct {
					f  model.WebhooksFocus
					id int64
				}{f, id})
			},
			ClearURL: func() { spy.cleared++ },
			Copy: func(text string) bool {
				spy.copied = append(spy.copied, text)
				return spy.copyOK
			},
			SignedOut: func(err error) bool {
				if client.IsUnauthorized(err) {
					spy.signedOut++
					return true
				}
				return false
			},
			ErrorText: bbsErrorText,
		})
		w.Load()
	})
	p.Wait("the webhooks read", func() bool { return !w.Loading })
	return w, spy
}

func bbsLastHooksFocus(spy *bbsHooksSpy) (model.WebhooksFocus, int64) {
	if len(spy.focus) == 0 {
		return 0, 0
	}
	f := spy.focus[len(spy.focus)-1]
	return f.f, f.id
}

// bbsAddHook adds a webhook at url through the page and returns its id.
func bbsAddHook(t *testing.T, p *bbsPage, w *model.Webhooks, url string) int64 {
	t.Helper()
	p.Do(func() {
		w.SetURL(url)
		w.Add()
	})
	p.Wait("the webhook added", func() bool { return !w.Busy })
	var id int64
	p.Do(func() {
		if w.CreateErr != nil {
			t.Fatalf("adding the webhook %s: %v", url, w.CreateErr)
		}
		for _, h := range w.Hooks {
			if h.URL == url {
				id = h.ID
			}
		}
		if id == 0 {
			t.Fatalf("the added webhook %s is not in the page's list: %+v", url, w.Hooks)
		}
	})
	return id
}

// bbsHooks reads the extension's webhooks as the service lists them (and
// the raw answer).
func bbsHooks(t *testing.T, c *client.Client, id int64) ([]betaport.Webhook, []byte) {
	t.Helper()
	var raw json.RawMessage
	if err := c.Do(context.Background(), http.MethodGet, api.WebhooksPath(id), nil, &raw); err != nil {
		t.Fatalf("reading the webhooks of extension %d: %v", id, err)
	}
	var pg api.Page[betaport.Webhook]
	if err := json.Unmarshal(raw, &pg); err != nil {
		t.Fatal(err)
	}
	return pg.Data, raw
}

// bbsStoredDeliveries are a webhook's deliveries as the service stored them.
func bbsStoredDeliveries(t *testing.T, m *cli.Main, hookID int64) []*betaport.WebhookDelivery {
	ds, err := m.Store.FindDeliveries(context.Background(), hookID, 0, 50)
	if err != nil {
		t.Errorf("reading webhook %d's deliveries: %v", hookID, err)
	}
	return ds
}

// bbsWaitStored waits until the service has stored what cond asks of a
// webhook's deliveries.
func bbsWaitStored(t *testing.T, p *bbsPage, m *cli.Main, hookID int64, what string, cond func([]*betaport.WebhookDelivery) bool) {
	t.Helper()
	p.Wait("the service has "+what, func() bool { return cond(bbsStoredDeliveries(t, m, hookID)) })
}

// bbsPollUntil moves the page's clock by step, one poll at a time, letting
// each poll land, until the page shows what cond asks.
func bbsPollUntil(t *testing.T, p *bbsPage, step time.Duration, what string, cond func() bool) {
	t.Helper()
	for i := 0; i < 30; i++ {
		p.Settle()
		var ok bool
		p.Do(func() { ok = cond() })
		if ok {
			return
		}
		p.Clock.Advance(step)
	}
	t.Fatalf("the page never showed %s, polling every %v", what, step)
}

// Add a receiver, send a test event, see its delivery (pending at once,
// then delivered with the receiver's status and answer), the receiver
// got a ping signed with the secret the page showed once; then delete it
// after its question.
func TestBBWebhooksAddTestSeeTheAnswerAndDelete(t *testing.T) {
	t.Parallel()
	m, d := bbsWebhookService(t)
	c := adminClient(t, m, d)
	ext := d.Extensions[2]
	recv := bbsNewReceiver(t, http.StatusOK, "thanks, got it")
	url := recv.URL + "/betaport"

	p := bbsOpen(t, c)
	w, spy := bbsOpenWebhooks(t, p, ext.ID)
	p.Do(func() {
		if w.Err != nil || len(w.Hooks) != 0 {
			t.Fatalf("a fresh extension's webhooks: %+v, error %v; want none", w.Hooks, w.Err)
		}
	})
	id := bbsAddHook(t, p, w, url)
	var secret string
	p.Do(func() {
		secret = w.Secret
		if !strings.HasPrefix(secret, api.WebhookSecretPrefix) || w.SecretURL != url {
			t.Errorf("after adding, the page shows the secret %q for %q; want a %s… secret for %s", secret, w.SecretURL, api.WebhookSecretPrefix, url)
		}
		if spy.cleared == 0 {
			t.Errorf("the URL field was not emptied once the webhook was added")
		}
		if f, _ := bbsLastHooksFocus(spy); f != model.WebhooksFocusSecret {
			t.Errorf("after adding, the focus went to %d, want the new secret (%d), to copy it now", f, model.WebhooksFocusSecret)
		}
		if w.Announce == "" {
			t.Errorf("nothing was announced for a screen reader when the webhook was added")
		}
		w.CopySecret()
	})
	p.Do(func() {
		if len(spy.copied) != 1 || spy.copied[0] != secret || !w.Copied {
			t.Errorf("Copy put %q on the clipboard (copied %v), want the secret", spy.copied, w.Copied)
		}
	})
	hooks, raw := bbsHooks(t, c, ext.ID)
	if len(hooks) != 1 || hooks[0].URL != url || hooks[0].ID != id {
		t.Fatalf("the service lists %+v, want the one webhook %d at %s", hooks, id, url)
	}
	if strings.Contains(string(raw), secret) {
		t.Errorf("the webhooks list shows the secret again")
	}

	// Send test event.
	p.Do(func() { w.Test(id) })
	p.Wait("the test delivery shown", func() bool {
		h := w.Hook(id)
		return h != nil && (len(h.Deliveries) > 0 || h.Err != nil)
	})
	p.Do(func() {
		h := w.Hook(id)
		if h.Err != nil {
			t.Fatalf("Send test event failed: %v", h.Err)
		}
		if got := h.Deliveries[0]; got.Type != betaport.EventPing {
			t.Errorf("the test delivery shows type %q, want %q", got.Type, betaport.EventPing)
		}
	})
	bbsWaitStored(t, p, m, id, "the ping delivered", func(ds []*betaport.WebhookDelivery) bool {
		return len(ds) == 1 && ds[0].State == betaport.DeliveryDelivered
	})
	got := recv.Received()
	if len(got) != 1 {
		t.Fatalf("the receiver got %d requests, want the one ping", len(got))
	}
	if ev := got[0].header.Get("Betaport-Event"); ev != betaport.EventPing {
		t.Errorf("Betaport-Event: %q, want ping", ev)
	}
	var body betaport.WebhookEvent
	if err := json.Unmarshal(got[0].body, &body); err != nil || body.Type != betaport.EventPing || body.Extension.ID != strconv.FormatInt(ext.ID, 10) {
		t.Errorf("the ping's body %s (%v): want type ping for extension %d", got[0].body, err, ext.ID)
	}
	if !bbsVerify(secret, got[0].header.Get("Betaport-Signature"), got[0].body) {
		t.Errorf("the ping's Betaport-Signature %q does not verify with the secret the page showed", got[0].header.Get("Betaport-Signature"))
	}

	bbsPollUntil(t, p, model.WebhookPoll, "the ping delivered", func() bool {
		h := w.Hook(id)
		return h != nil && len(h.Deliveries) == 1 && h.Deliveries[0].State == betaport.DeliveryDelivered
	})
	p.Do(func() {
		dl := w.Hook(id).Deliveries[0]
		if dl.LastStatus != http.StatusOK || dl.Response != "thanks, got it" || dl.Attempts != 1 {
			t.Errorf("the delivered ping shows status %d, answer %q, %d attempts; want 200, the receiver's \"thanks, got it\", 1", dl.LastStatus, dl.Response, dl.Attempts)
		}
	})

	// Delete, after its question.
	p.Do(func() { w.AskDelete(id) })
	p.Clock.Advance(model.ConfirmDelay) // its Yes takes a press now
	p.Do(func() {
		if h := w.Hook(id); h == nil || !h.Asking {
			t.Errorf("Delete did not ask first")
		}
		if f, hid := bbsLastHooksFocus(spy); f != model.WebhooksFocusConfirm || hid != id {
			t.Errorf("the question opened with the focus on %d of %d, want \"Yes, delete\" of %d", f, hid, id)
		}
		w.Delete(id)
	})
	p.Wait("the webhook gone from the page", func() bool { return w.Hook(id) == nil })
	p.Do(func() {
		if w.Secret != "" {
			t.Errorf("the deleted webhook's secret still shows")
		}
	})
	if hooks, _ := bbsHooks(t, c, ext.ID); len(hooks) != 0 {
		t.Errorf("after Delete the service still lists %+v", hooks)
	}
}

// A receiver that fails: the page shows the attempt's status and the
// start of its answer while the delivery is pending; once the receiver
// recovers the service retries and the page shows it delivered.
func TestBBWebhooksFailingReceiverThenItsRetry(t *testing.T) {
	t.Parallel()
	m, d := bbsWebhookService(t)
	c := adminClient(t, m, d)
	ext := d.Extensions[2]
	recv := bbsNewReceiver(t, http.StatusServiceUnavailable, "down for maintenance")
	p := bbsOpen(t, c)
	w, _ := bbsOpenWebhooks(t, p, ext.ID)
	id := bbsAddHook(t, p, w, recv.URL)

	p.Do(func() { w.Test(id) })
	bbsWaitStored(t, p, m, id, "a failed attempt", func(ds []*betaport.WebhookDelivery) bool {
		return len(ds) == 1 && ds[0].Attempts >= 1 && ds[0].LastStatus == http.StatusServiceUnavailable
	})
	recvHitsBefore := recv.hits.Load()
	bbsPollUntil(t, p, model.WebhookPoll, "the failed attempt", func() bool {
		h := w.Hook(id)
		return h != nil && len(h.Deliveries) == 1 && h.Deliveries[0].LastStatus == http.StatusServiceUnavailable
	})
	p.Do(func() {
		dl := w.Hook(id).Deliveries[0]
		if dl.State == betaport.DeliveryDelivered {
			t.Errorf("a 503 shows as delivered")
		}
		if !strings.Contains(dl.Response, "down for maintenance") {
			t.Errorf("the failed attempt shows the answer %q, want the receiver's \"down for maintenance\"", dl.Response)
		}
	})

	recv.status.Store(http.StatusOK)
	recv.body.Store("back")
	bbsWaitStored(t, p, m, id, "the retry delivered", func(ds []*betaport.WebhookDelivery) bool {
		return len(ds) == 1 && ds[0].State == betaport.DeliveryDelivered
	})
	if recv.hits.Load() <= recvHitsBefore && recvHitsBefore < 2 {
		t.Errorf("delivered without a second attempt reaching the receiver")
	}
	bbsPollUntil(t, p, model.WebhookPoll, "the retry delivered", func() bool {
		h := w.Hook(id)
		return h != nil && len(h.Deliveries) == 1 && h.Deliveries[0].State == betaport.DeliveryDelivered
	})
	p.Do(func() {
		dl := w.Hook(id).Deliveries[0]
		if dl.LastStatus != http.StatusOK || dl.Response != "back" || dl.Attempts < 2 {
			t.Errorf("after the retry the page shows status %d, answer %q, %d attempts; want 200, \"back\", 2 or more", dl.LastStatus, dl.Response, dl.Attempts)
		}
	})
}

// URLs the service refuses: the error shows by the field, which keeps
// what was typed, and nothing is added; the fixed URL is added.
func TestBBWebhooksURLTyposAreRefusedAndKept(t *testing.T) {
	t.Parallel()
	m, d := bbsWebhookService(t)
	c := adminClient(t, m, d)
	ext := d.Extensions[2]
	recv := bbsNewReceiver(t, http.StatusOK, "")
	p := bbsOpen(t, c)
	w, _ := bbsOpenWebhooks(t, p, ext.ID)

	for _, bad := range []string{
		"not a url",
		"ftp://127.0.0.1/hook",
		"/relative/path",
		"http://user:secret@" + strings.TrimPrefix(recv.URL, "http://") + "/hook",
		recv.URL + "/" + strings.Repeat("x", betaport.MaxWebhookURL),
	} {
		p.Do(func() {
			w.SetURL(bad)
			w.Add()
		})
		p.Wait("the URL answered", func() bool { return !w.Busy })
		p.Do(func() {
			if w.CreateErr == nil || !w.URLInvalid {
				t.Errorf("URL %q: error %v, URLInvalid %v; want refused by the field", bbsShort(bad), w.CreateErr, w.URLInvalid)
			}
			if w.URL != bad {
				t.Errorf("URL %q refused: the field now holds %q, want what was typed", bbsShort(bad), bbsShort(w.URL))
			}
			if w.Secret != "" || len(w.Hooks) != 0 {
				t.Errorf("URL %q: a webhook shows (%d, secret %q)", bbsShort(bad), len(w.Hooks), w.Secret)
			}
		})
	}
	if hooks, _ := bbsHooks(t, c, ext.ID); len(hooks) != 0 {
		t.Fatalf("refused URLs were stored: %+v", hooks)
	}
	bbsAddHook(t, p, w, recv.URL+"/hook")
	p.Do(func() {
		if w.CreateErr != nil || w.URLInvalid {
			t.Errorf("after the fix the error still shows: %v (invalid %v)", w.CreateErr, w.URLInvalid)
		}
	})
}

// Add pressed again while the webhook is being added adds one.
func TestBBWebhooksAddPressedTwiceAddsOne(t *testing.T) {
	t.Parallel()
	m, d := bbsWebhookService(t)
	c := adminClient(t, m, d)
	wire := bbsWireOf(c)
	ext := d.Extensions[2]
	recv := bbsNewReceiver(t, http.StatusOK, "")
	p := bbsOpen(t, c)
	w, _ := bbsOpenWebhooks(t, p, ext.ID)

	gate := wire.Hold(t, http.MethodPost, api.WebhooksPath(ext.ID), false)
	p.Do(func() {
		w.SetURL(recv.URL)
		w.Add()
		w.Add()
	})
	gate.Arrived(t, p, "the new webhook")
	p.Do(func() {
		if !w.Busy {
			t.Errorf("while the webhook is being added the page does not say so")
		}
		w.Add()
	})
	gate.Let()
	p.Wait("added", func() bool { return !w.Busy })
	p.Settle()
	if n := wire.Count(http.MethodPost, api.WebhooksPath(ext.ID)); n != 1 {
		t.Errorf("Add pressed three times sent %d adds, want 1", n)
	}
	if hooks, _ := bbsHooks(t, c, ext.ID); len(hooks) != 1 {
		t.Errorf("the service lists %d webhooks, want 1", len(hooks))
	}
	p.Do(func() {
		if len(w.Hooks) != 1 {
			t.Errorf("the page lists %d webhooks, want 1", len(w.Hooks))
		}
	})
}

// "Send test event" pressed twice while the first is on its way sends one
// ping; several pings later the row shows the newest WebhookDeliveriesShown.
func TestBBWebhooksTestPressedTwiceSendsOnePing(t *testing.T) {
	t.Parallel()
	m, d := bbsWebhookService(t)
	c := adminClient(t, m, d)
	wire := bbsWireOf(c)
	ext := d.Extensions[2]
	recv := bbsNewReceiver(t, http.StatusOK, "ok")
	p := bbsOpen(t, c)
	w, _ := bbsOpenWebhooks(t, p, ext.ID)
	id := bbsAddHook(t, p, w, recv.URL)

	path := api.WebhookTestPath(ext.ID, id)
	gate := wire.Hold(t, http.MethodPost, path, false)
	p.Do(func() { w.Test(id) })
	gate.Arrived(t, p, "the test event")
	p.Do(func() {
		if h := w.Hook(id); h == nil || !h.Testing {
			t.Errorf("while the test event is on its way the row does not say so")
		}
		w.Test(id)
	})
	gate.Let()
	p.Wait("the ping shown", func() bool { h := w.Hook(id); return h != nil && !h.Testing })
	p.Settle()
	if n := wire.Count(http.MethodPost, path); n != 1 {
		t.Errorf("Send test event pressed twice sent %d pings, want 1", n)
	}
	if ds := bbsStoredDeliveries(t, m, id); len(ds) != 1 {
		t.Errorf("the service has %d deliveries, want 1 ping", len(ds))
	}

	for i := 0; i < model.WebhookDeliveriesShown+1; i++ {
		p.Do(func() { w.Test(id) })
		p.Wait("the ping sent", func() bool { h := w.Hook(id); return h != nil && !h.Testing })
	}
	total := model.WebhookDeliveriesShown + 2
	bbsWaitStored(t, p, m, id, "every ping delivered", func(ds []*betaport.WebhookDelivery) bool {
		if len(ds) != total {
			return false
		}
		for _, d := range ds {
			if d.State != betaport.DeliveryDelivered {
				return false
			}
		}
		return true
	})
	stored := bbsStoredDeliveries(t, m, id)
	bbsPollUntil(t, p, model.WebhookPoll, "the newest deliveries, delivered", func() bool {
		h := w.Hook(id)
		if h == nil || len(h.Deliveries) == 0 {
			return false
		}
		for _, d := range h.Deliveries {
			if d.State != betaport.DeliveryDelivered {
				return false
			}
		}
		return true
	})
	p.Do(func() {
		h := w.Hook(id)
		if len(h.Deliveries) != model.WebhookDeliveriesShown {
			t.Errorf("the row shows %d deliveries of %d, want the newest %d", len(h.Deliveries), total, model.WebhookDeliveriesShown)
			return
		}
		for i, d := range h.Deliveries {
			if d.ID != stored[i].ID {
				t.Errorf("delivery %d shown is #%d, want #%d (newest first)", i, d.ID, stored[i].ID)
			}
		}
	})
}

// Delete asks first; Keep keeps it; Yes pressed twice deletes once. The
// deleted webhook gets no event of a later publish while the other one
// does, and the page shows that one's delivery without a reload.
func TestBBWebhooksDeleteAsksFirstAndStopsEvents(t *testing.T) {
	t.Parallel()
	m, d := bbsWebhookService(t)
	c := adminClient(t, m, d)
	wire := bbsWireOf(c)
	ext := d.Extensions[2]
	keep := bbsNewReceiver(t, http.StatusOK, "kept")
	gone := bbsNewReceiver(t, http.StatusOK, "gone")
	p := bbsOpen(t, c)
	w, spy := bbsOpenWebhooks(t, p, ext.ID)
	keepID := bbsAddHook(t, p, w, keep.URL)
	goneID := bbsAddHook(t, p, w, gone.URL)
	del := api.WebhookPath(ext.ID, goneID)

	// Yes without the question: nothing.
	p.Do(func() { w.Delete(goneID) })
	p.Settle()
	if n := wire.Count(http.MethodDelete, del); n != 0 {
		t.Errorf("Delete without its question sent %d deletes", n)
	}
	// The question, Keep.
	p.Do(func() { w.AskDelete(goneID) })
	p.Clock.Advance(model.ConfirmDelay) // its Yes takes a press now
	p.Do(func() { w.Keep(goneID) })
	p.Do(func() {
		if h := w.Hook(goneID); h == nil || h.Asking {
			t.Errorf("Keep: the webhook is %+v, want kept with its question closed", h)
		}
		if f, hid := bbsLastHooksFocus(spy); f != model.WebhooksFocusDelete || hid != goneID {
			t.Errorf("after Keep the focus is on %d of %d, want its Delete button", f, hid)
		}
	})
	p.Settle()
	if n := wire.Count(http.MethodDelete, del); n != 0 {
		t.Fatalf("Keep deleted the webhook")
	}
	// The question, Yes twice.
	gate := wire.Hold(t, http.MethodDelete, del, false)
	p.Do(func() { w.AskDelete(goneID) })
	p.Clock.Advance(model.ConfirmDelay) // its Yes takes a press now
	p.Do(func() { w.Delete(goneID) })
	gate.Arrived(t, p, "the delete")
	p.Do(func() {
		if h := w.Hook(goneID); h != nil && !h.Deleting {
			t.Errorf("while the delete is on its way the row does not say so")
		}
		w.Delete(goneID)
	})
	gate.Let()
	p.Wait("the webhook gone from the page", func() bool { return w.Hook(goneID) == nil })
	p.Settle()
	if n := wire.Count(http.MethodDelete, del); n != 1 {
		t.Errorf("Yes pressed twice sent %d deletes, want 1", n)
	}
	hooks, _ := bbsHooks(t, c, ext.ID)
	if len(hooks) != 1 || hooks[0].ID != keepID {
		t.Fatalf("after the delete the service lists %+v, want only %d", hooks, keepID)
	}

	// A pipeline publishes.
	k, kspy := bbsOpenKeys(t, p, ext.ID)
	file := bbsCreateKey(t, p, k, kspy, "CI")
	if _, err := bbsSubmit(m, bbsServiceKey(t, file)); err != nil {
		t.Fatalf("publishing: %v", err)
	}
	bbsWaitStored(t, p, m, keepID, "the publish delivered to the kept webhook", func(ds []*betaport.WebhookDelivery) bool {
		return len(ds) == 1 && ds[0].Type == betaport.EventBundlePublished && ds[0].State == betaport.DeliveryDelivered
	})
	if ds := bbsStoredDeliveries(t, m, goneID); len(ds) != 0 {
		t.Errorf("the deleted webhook got deliveries: %+v", ds[0])
	}
	if n := gone.hits.Load(); n != 0 {
		t.Errorf("the deleted webhook's receiver was called %d times", n)
	}
	bbsPollUntil(t, p, model.WebhookIdlePoll, "the publish's delivery", func() bool {
		h := w.Hook(keepID)
		return h != nil && len(h.Deliveries) == 1 && h.Deliveries[0].State == betaport.DeliveryDelivered
	})
	p.Do(func() {
		if dl := w.Hook(keepID).Deliveries[0]; dl.Type != betaport.EventBundlePublished || dl.Response != "kept" {
			t.Errorf("the kept webhook shows %q answered %q, want bundle.published answered \"kept\"", dl.Type, dl.Response)
		}
	})
}

// One tab deletes a webhook; a second tab that still lists it sends it a
// test event: the second tab says it is gone (or drops it), shows no
// ping waiting forever, and the service sends nothing.
func TestBBWebhooksTestAfterAnotherTabDeletedIt(t *testing.T) {
	t.Parallel()
	m, d := bbsWebhookService(t)
	c := adminClient(t, m, d)
	ext := d.Extensions[2]
	recv := bbsNewReceiver(t, http.StatusOK, "")
	tabA := bbsOpen(t, c)
	wa, _ := bbsOpenWebhooks(t, tabA, ext.ID)
	id := bbsAddHook(t, tabA, wa, recv.URL)
	tabB := bbsOpen(t, c)
	wb, _ := bbsOpenWebhooks(t, tabB, ext.ID)
	tabB.Settle()
	tabB.Do(func() {
		if wb.Hook(id) == nil {
			t.Fatalf("the second tab does not list the webhook")
		}
	})

	tabA.Do(func() { wa.AskDelete(id) })
	tabA.Clock.Advance(model.ConfirmDelay) // its Yes takes a press now
	tabA.Do(func() { wa.Delete(id) })
	tabA.Wait("deleted in tab A", func() bool { return wa.Hook(id) == nil })

	tabB.Do(func() { wb.Test(id) })
	tabB.Wait("the test answered", func() bool { h := wb.Hook(id); return h == nil || !h.Testing })
	tabB.Settle()
	tabB.Do(func() {
		h := wb.Hook(id)
		if h == nil {
			return // dropped from the list: fine
		}
		if h.Err == nil {
			t.Errorf("a test event to a webhook deleted in another tab shows no error (deliveries %+v)", h.Deliveries)
		}
		for _, dl := range h.Deliveries {
			if dl.State == betaport.DeliveryPending {
				t.Errorf("the second tab shows a ping pending to a deleted webhook")
			}
		}
	})
	if ds := bbsStoredDeliveries(t, m, id); len(ds) != 0 {
		t.Errorf("the service made a delivery to a deleted webhook: %+v", ds[0])
	}
}

// The secret shows once: a later visit to the page lists the webhook
// without it.
func TestBBWebhooksSecretShownOnlyOnce(t *testing.T) {
	t.Parallel()
	m, d := bbsWebhookService(t)
	c := adminClient(t, m, d)
	ext := d.Extensions[2]
	recv := bbsNewReceiver(t, http.StatusOK, "")
	p := bbsOpen(t, c)
	w, _ := bbsOpenWebhooks(t, p, ext.ID)
	first := bbsAddHook(t, p, w, recv.URL+"/a")
	var s1 string
	p.Do(func() { s1 = w.Secret })
	second := bbsAddHook(t, p, w, recv.URL+"/b")
	p.Do(func() {
		if w.Secret == "" || w.Secret == s1 || w.SecretURL != recv.URL+"/b" {
			t.Errorf("after a second add the page shows secret %q for %q; want the second webhook's own", w.Secret, w.SecretURL)
		}
		if len(w.Hooks) != 2 || w.Hooks[0].ID != second || w.Hooks[1].ID != first {
			t.Errorf("the page lists %+v, want the two webhooks newest first", w.Hooks)
		}
	})
	p.Leave()

	again := bbsOpen(t, c)
	w2, _ := bbsOpenWebhooks(t, again, ext.ID)
	again.Do(func() {
		if w2.Secret != "" {
			t.Errorf("a later visit shows a secret again: %q", w2.Secret)
		}
		if len(w2.Hooks) != 2 {
			t.Errorf("a later visit lists %d webhooks, want 2", len(w2.Hooks))
		}
	})
}

// Another team's admin on Acme's settings address: the list is refused
// with a message and their add stores nothing.
func TestBBWebhooksAnotherTeamsAdminIsRefused(t *testing.T) {
	t.Parallel()
	m, d := bbsWebhookService(t)
	acme := adminClient(t, m, d)
	ext := d.Extensions[2]
	recv := bbsNewReceiver(t, http.StatusOK, "")
	hobby := bbsSignIn(t, m, d.Admins[1])
	p := bbsOpen(t, hobby)
	w, _ := bbsOpenWebhooks(t, p, ext.ID)
	p.Do(func() {
		if w.Err == nil {
			t.Errorf("Hobby's admin reads Acme's webhooks without an error: %+v", w.Hooks)
		}
		w.SetURL(recv.URL + "/exfiltrate")
		w.Add()
	})
	p.Wait("the add answered", func() bool { return !w.Busy })
	p.Settle()
	p.Do(func() {
		if w.CreateErr == nil || w.Secret != "" {
			t.Errorf("Hobby's admin added a webhook to Acme's extension (error %v, secret %q)", w.CreateErr, w.Secret)
		}
	})
	if hooks, _ := bbsHooks(t, acme, ext.ID); len(hooks) != 0 {
		t.Errorf("Acme's extension has webhooks another team added: %+v", hooks)
	}
}

// Signed out in another tab, the admin adds a webhook: they are sent to
// sign in and nothing is stored.
func TestBBWebhooksSignedOutBeforeAdding(t *testing.T) {
	t.Parallel()
	m, d := bbsWebhookService(t)
	c := adminClient(t, m, d)
	ext := d.Extensions[2]
	recv := bbsNewReceiver(t, http.StatusOK, "")
	p := bbsOpen(t, c)
	w, spy := bbsOpenWebhooks(t, p, ext.ID)
	if err := c.SignOut(context.Background()); err != nil {
		t.Fatal(err)
	}
	p.Do(func() {
		w.SetURL(recv.URL)
		w.Add()
	})
	p.Wait("the add answered", func() bool { return spy.signedOut > 0 || w.CreateErr != nil || w.Secret != "" })
	p.Settle()
	p.Do(func() {
		if spy.signedOut == 0 {
			t.Errorf("signed out, the person was not sent to sign in (error %v)", w.CreateErr)
		}
		if w.Secret != "" {
			t.Errorf("signed out, a webhook secret shows")
		}
	})
	if hooks, _ := bbsHooks(t, adminClient(t, m, d), ext.ID); len(hooks) != 0 {
		t.Errorf("a signed-out browser added webhooks: %+v", hooks)
	}
}

// Leaving the page stops reading the deliveries: the clock moves on and
// no request goes, whether the section is closed or only its page's
// context ends (go-app ends it when the person navigates away).
func TestBBWebhooksLeavingStopsReadingDeliveries(t *testing.T) {
	t.Parallel()
	for _, how := range []string{"closed", "context ended"} {
		t.Run(strings.ReplaceAll(how, " ", "_"), func(t *testing.T) {
			m, d := bbsWebhookService(t)
			c := adminClient(t, m, d)
			wire := bbsWireOf(c)
			ext := d.Extensions[2]
			recv := bbsNewReceiver(t, http.StatusOK, "")
			p := bbsOpen(t, c)
			w, _ := bbsOpenWebhooks(t, p, ext.ID)
			id := bbsAddHook(t, p, w, recv.URL)
			p.Do(func() { w.Test(id) })
			p.Wait("the ping shown", func() bool { h := w.Hook(id); return h != nil && !h.Testing })
			p.Settle()

			path := api.WebhookDeliveriesPath(ext.ID, id)
			before := wire.Count(http.MethodGet, path)
			p.Clock.Advance(model.WebhookIdlePoll)
			p.Settle()
			if wire.Count(http.MethodGet, path) == before {
				t.Fatalf("the open page did not read the deliveries again after %v", model.WebhookIdlePoll)
			}

			if how == "closed" {
				p.Do(func() { w.Close() })
			}
			p.Leave()
			p.Settle()
			before = wire.Count(http.MethodGet, path)
			for i := 0; i < 3; i++ {
				p.Clock.Advance(model.WebhookIdlePoll)
				p.Settle()
			}
			if n := wire.Count(http.MethodGet, path) - before; n != 0 {
				t.Errorf("after the person left (section %s), the page read the deliveries %d more times", how, n)
			}
		})
	}
}

// Without --webhooks-allow-private (the default service), a webhook at a
// loopback address is refused when it is added (issue 28: it used to be
// taken, then retried for a day for a reason that could not change): the
// field says why and what to do, nothing is stored, and the receiver is
// never reached.
func TestBBWebhooksLoopbackIsRefusedByDefault(t *testing.T) {
	t.Parallel()
	m, d := service(t)
	c := adminClient(t, m, d)
	ext := d.Extensions[2]
	recv := bbsNewReceiver(t, http.StatusOK, "should never be seen")
	p := bbsOpen(t, c)
	w, _ := bbsOpenWebhooks(t, p, ext.ID)
	p.Do(func() {
		w.SetURL(recv.URL + "/hook")
		w.Add()
	})
	p.Wait("the answer to the add", func() bool { return !w.Busy })
	var refused error
	p.Do(func() { refused = w.CreateErr })
	pr, ok := api.AsProblem(refused)
	if !ok || pr.Status != http.StatusBadRequest || pr.Param != "url" || !strings.Contains(pr.Detail, "--webhooks-allow-private") {
		t.Fatalf("adding a loopback webhook: %v; want a 400 on the url field naming --webhooks-allow-private", refused)
	}
	if hooks, raw := bbsHooks(t, c, ext.ID); len(hooks) != 0 {
		t.Errorf("a refused webhook was stored: %s", raw)
	}
	if n := recv.hits.Load(); n != 0 {
		t.Errorf("the loopback receiver was called %d times", n)
	}
}

// A URL pasted with spaces around it, with a query the receiver needs:
// the webhook is kept as the address itself, and its events reach that
// address, query and all. A receiver's long answer shows cut to
// MaxDeliveryResponse.
func TestBBWebhooksPastedURLWithQueryAndALongAnswer(t *testing.T) {
	t.Parallel()
	m, d := bbsWebhookService(t)
	c := adminClient(t, m, d)
	ext := d.Extensions[2]
	recv := bbsNewReceiver(t, http.StatusOK, strings.Repeat("y", 3*betaport.MaxDeliveryResponse))
	url := recv.URL + "/hooks/betaport?token=abc&env=ci"
	p := bbsOpen(t, c)
	w, _ := bbsOpenWebhooks(t, p, ext.ID)
	p.Do(func() {
		w.SetURL("  " + url + "\n")
		w.Add()
	})
	p.Wait("the add answered", func() bool { return !w.Busy })
	var id int64
	p.Do(func() {
		if w.CreateErr != nil {
			t.Logf("a pasted URL with spaces around it is refused: %s", bbsErrorText(w.CreateErr))
			return
		}
		for _, h := range w.Hooks {
			id = h.ID
			if h.URL != url {
				t.Errorf("the pasted URL is listed as %q, want %q", h.URL, url)
			}
		}
	})
	if id == 0 {
		id = bbsAddHook(t, p, w, url)
	}
	p.Do(func() { w.Test(id) })
	bbsWaitStored(t, p, m, id, "the ping's outcome", func(ds []*betaport.WebhookDelivery) bool {
		return len(ds) == 1 && ds[0].Attempts > 0 && (ds[0].State != betaport.DeliveryPending || ds[0].LastError != "" || ds[0].LastStatus != 0)
	})
	if got := recv.Received(); len(got) != 1 || got[0].uri != "/hooks/betaport?token=abc&env=ci" {
		var uris []string
		for _, g := range got {
			uris = append(uris, g.uri)
		}
		t.Fatalf("the receiver was called at %q, want once at /hooks/betaport?token=abc&env=ci", uris)
	}
	bbsPollUntil(t, p, model.WebhookPoll, "the ping delivered", func() bool {
		h := w.Hook(id)
		return h != nil && len(h.Deliveries) == 1 && h.Deliveries[0].State == betaport.DeliveryDelivered
	})
	p.Do(func() {
		r := w.Hook(id).Deliveries[0].Response
		if len(r) == 0 || len(r) > betaport.MaxDeliveryResponse || strings.Trim(r, "y") != "" {
			t.Errorf("the long answer shows as %d bytes, want its first %d at most", len(r), betaport.MaxDeliveryResponse)
		}
	})
}

// A webhook whose receiver keeps failing is deleted: its pending delivery
// fails at once (no more attempts), as the page had promised.
func TestBBWebhooksDeleteStopsPendingRetries(t *testing.T) {
	t.Parallel()
	m, d := bbsWebhookService(t)
	c := adminClient(t, m, d)
	ext := d.Extensions[2]
	recv := bbsNewReceiver(t, http.StatusInternalServerError, "broken")
	p := bbsOpen(t, c)
	w, _ := bbsOpenWebhooks(t, p, ext.ID)
	id := bbsAddHook(t, p, w, recv.URL)
	p.Do(func() { w.Test(id) })
	bbsWaitStored(t, p, m, id, "a failed attempt", func(ds []*betaport.WebhookDelivery) bool {
		return len(ds) == 1 && ds[0].Attempts >= 1 && ds[0].LastStatus == http.StatusInternalServerError
	})
	p.Do(func() { w.AskDelete(id) })
	p.Clock.Advance(model.ConfirmDelay) // its Yes takes a press now
	p.Do(func() { w.Delete(id) })
	p.Wait("the webhook gone from the page", func() bool { return w.Hook(id) == nil })
	ds := bbsStoredDeliveries(t, m, id)
	if len(ds) != 1 || ds[0].State != betaport.DeliveryFailed {
		var st string
		if len(ds) > 0 {
			st = ds[0].State
		}
		t.Errorf("after Delete the webhook's pending ping is %q, want failed (no more attempts)", st)
	}
}
