package model_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/app/model"
)

// hooksFake is the webhooks part of the API: webhooks added (checked as
// the service checks them), their deliveries, a test event that makes a
// pending delivery the test then answers as the receiver would, and
// deletes.
type hooksFake struct {
	*settingsFake
	mu         sync.Mutex
	hooks      []betaport.Webhook // newest first
	deliveries map[int64][]betaport.WebhookDelivery
	nextID     int64
	// fail answers the next adds (and deletes) with this problem.
	failAdd, failDelete *api.Problem
}

func newHooksFake(t *testing.T, urls ...string) *hooksFake {
	f := &hooksFake{settingsFake: newSettingsFake(t), deliveries: map[int64][]betaport.WebhookDelivery{}, nextID: 1}
	for _, u := range urls {
		f.add(u)
	}
	f.handle("GET "+api.WebhooksPath(settingsExt), func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		settingsJSON(w, http.StatusOK, api.Page[betaport.Webhook]{Data: append([]betaport.Webhook{}, f.hooks...)})
	})
	f.handle("POST "+api.WebhooksPath(settingsExt), func(w http.ResponseWriter, r *http.Request) {
		var in api.NewWebhook
		json.NewDecoder(r.Body).Decode(&in)
		f.mu.Lock()
		fail := f.failAdd
		f.mu.Unlock()
		if fail != nil {
			settingsProblem(w, fail.Status, fail.Param, fail.Detail)
			return
		}
		var refused *betaport.Error
		if err := betaport.ValidateWebhookURL(in.URL); errors.As(err, &refused) {
			settingsProblem(w, http.StatusBadRequest, refused.Param, refused.Message)
			return
		}
		h := f.add(in.URL)
		settingsJSON(w, http.StatusCreated, api.CreatedWebhook{Webhook: h, Secret: api.WebhookSecretPrefix + "s" + strconv.FormatInt(h.ID, 10)})
	})
	f.handle("GET "+api.WebhooksPath(settingsExt)+"/{hook}/deliveries", func(w http.ResponseWriter, r *http.Request) {
		id, _ := strconv.ParseInt(r.PathValue("hook"), 10, 64)
		if r.URL.Query().Get("limit") != strconv.Itoa(model.WebhookDeliveriesShown) {
			settingsProblem(w, http.StatusBadRequest, "limit", "limit "+r.URL.Query().Get("limit"))
			return
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		settingsJSON(w, http.StatusOK, api.Page[betaport.WebhookDelivery]{Data: append([]betaport.WebhookDelivery{}, f.deliveries[id]...)})
	})
	f.handle("POST "+api.WebhooksPath(settingsExt)+"/{hook}/test", func(w http.ResponseWriter, r *http.Request) {
		id, _ := strconv.ParseInt(r.PathValue("hook"), 10, 64)
		f.mu.Lock()
		defer f.mu.Unlock()
		d := betaport.WebhookDelivery{ID: f.nextID, EventID: "evt", Type: betaport.EventPing, State: betaport.DeliveryPending, CreatedAt: time.Now()}
		f.nextID++
		f.deliveries[id] = append([]betaport.WebhookDelivery{d}, f.deliveries[id]...)
		settingsJSON(w, http.StatusAccepted, d)
	})
	f.handle("DELETE "+api.WebhooksPath(settingsExt)+"/{hook}", func(w http.ResponseWriter, r *http.Request) {
		id, _ := strconv.ParseInt(r.PathValue("hook"), 10, 64)
		f.mu.Lock()
		defer f.mu.Unlock()
		if p := f.failDelete; p != nil {
			settingsProblem(w, p.Status, p.Param, p.Detail)
			return
		}
		for i, h := range f.hooks {
			if h.ID == id {
				f.hooks = append(f.hooks[:i:i], f.hooks[i+1:]...)
				w.WriteHeader(http.StatusNoContent)
				return
			}
		}
		settingsProblem(w, http.StatusNotFound, "", "There is no such webhook.")
	})
	return f
}

func (f *hooksFake) add(url string) betaport.Webhook {
	f.mu.Lock()
	defer f.mu.Unlock()
	h := betaport.Webhook{ID: f.nextID, URL: url, CreatedBy: "ada@example.com", CreatedAt: time.Now()}
	f.nextID++
	f.hooks = append([]betaport.Webhook{h}, f.hooks...)
	return h
}

// receiverAnswers records the receiver's answer to hook's latest
// delivery, as the service's worker does.
func (f *hooksFake) receiverAnswers(hook int64, status int, response string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	d := &f.deliveries[hook][0]
	now := time.Now()
	d.Attempts, d.LastStatus, d.Response = 1, status, response
	if status < 300 {
		d.State, d.DeliveredAt = betaport.DeliveryDelivered, &now
	} else {
		d.LastError = "the receiver answered " + strconv.Itoa(status)
		d.NextAttemptAt = &now
	}
}

func (f *hooksFake) set(do func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	do()
}

// hooksHarness is a Webhooks on a page against the webhooks fake.
type hooksHarness struct {
	*settingsPage
	api *hooksFake
	fx  *settingsEffects
	w   *model.Webhooks
}

func newHooksHarness(t *testing.T, urls ...string) *hooksHarness {
	h := &hooksHarness{api: newHooksFake(t, urls...), fx: &settingsEffects{}}
	h.settingsPage = newSettingsPage(t, h.api)
	h.do(func() {
		h.w = model.NewWebhooks(model.WebhooksConfig{
			Env: h.env, ExtensionID: settingsExt,
			Focus: func(f model.WebhooksFocus, id int64) {
				h.fx.add("focus %s %d", map[model.WebhooksFocus]string{model.WebhooksFocusURL: "url", model.WebhooksFocusSecret: "secret",
					model.WebhooksFocusConfirm: "confirm", model.WebhooksFocusDelete: "delete"}[f], id)
			},
			ClearURL: func() { h.fx.add("clear url") },
			Copy:     func(text string) bool { h.fx.add("copy %s", text); return true },
		})
		h.w.Load()
	})
	h.settle()
	h.api.takeCalls()
	return h
}

// hook reads webhook id as its row shows it.
func (h *hooksHarness) hook(id int64) model.Webhook {
	h.t.Helper()
	var out model.Webhook
	var ok bool
	h.do(func() {
		if p := h.w.Hook(id); p != nil {
			out, ok = *p, true
		}
	})
	if !ok {
		h.t.Fatalf("webhook %d is not listed", id)
	}
	return out
}

func (h *hooksHarness) urls() []string {
	var out []string
	h.do(func() {
		for _, x := range h.w.Hooks {
			out = append(out, x.URL)
		}
	})
	return out
}

func TestWebhooksListedWithTheirDeliveries(t *testing.T) {
	f := newHooksFake(t, "https://a.example/hook", "https://b.example/hook")
	f.set(func() {
		f.deliveries[1] = []betaport.WebhookDelivery{{ID: 9, Type: betaport.EventBundlePublished, State: betaport.DeliveryDelivered, LastStatus: 200, Response: "ok"}}
	})
	h := &hooksHarness{api: f, fx: &settingsEffects{}}
	h.settingsPage = newSettingsPage(t, f)
	h.do(func() {
		h.w = model.NewWebhooks(model.WebhooksConfig{Env: h.env, ExtensionID: settingsExt})
		h.w.Load()
		if !h.w.Loading {
			t.Error("while the webhooks are read the section is not loading")
		}
	})
	h.settle()
	settingsSame(t, "webhooks", h.urls(), []string{"https://b.example/hook", "https://a.example/hook"})
	if d := h.hook(1).Deliveries; len(d) != 1 || d[0].Response != "ok" {
		t.Errorf("webhook 1 shows deliveries %+v", d)
	}
	if d := h.hook(2).Deliveries; len(d) != 0 {
		t.Errorf("webhook 2 shows deliveries %+v", d)
	}
	h.do(func() {
		if h.w.Loading || h.w.Err != nil {
			t.Errorf("after reading: loading %v, error %v", h.w.Loading, h.w.Err)
		}
	})
}

func TestWebhooksRefusedURLMarksTheFieldAndKeepsIt(t *testing.T) {
	h := newHooksHarness(t)
	h.do(func() { h.w.SetURL("ftp://x"); h.w.Add() })
	h.settle()
	h.do(func() {
		w := h.w
		if w.CreateErr == nil || w.CreateErr.Error() != "A webhook URL starts with https:// (or http://)." {
			t.Errorf("a refused URL shows %v, want the service's detail", w.CreateErr)
		}
		if !w.URLInvalid {
			t.Error("a URL the service refused does not mark the field invalid")
		}
		if w.URL != "ftp://x" || w.Busy || len(w.Hooks) != 0 || w.Secret != "" {
			t.Errorf("after the refusal: URL %q, busy %v, %d webhooks, secret %q", w.URL, w.Busy, len(w.Hooks), w.Secret)
		}
		if w.Announce != "The webhook was not added: A webhook URL starts with https:// (or http://)." {
			t.Errorf("announced %q", w.Announce)
		}
	})
	settingsSame(t, "effects of a refused URL", h.fx.take(), []string{"focus url 0"})

	// A failure that is not the URL's shows, but does not mark the field.
	h.api.set(func() {
		h.api.failAdd = &api.Problem{Status: http.StatusServiceUnavailable, Detail: "The service is busy. Try again in a minute."}
	})
	h.do(func() { h.w.SetURL("https://ci.example.com/hook"); h.w.Add() })
	h.settle()
	h.do(func() {
		if h.w.CreateErr == nil || h.w.URLInvalid || h.w.URL != "https://ci.example.com/hook" {
			t.Errorf("a busy service: error %v, field invalid %v, URL %q", h.w.CreateErr, h.w.URLInvalid, h.w.URL)
		}
	})
	h.fx.take()
}

func TestWebhooksGoodURLIsAddedAndTheFieldEmptied(t *testing.T) {
	h := newHooksHarness(t, "https://old.example/hook")
	h.do(func() { h.w.SetURL("ftp://x"); h.w.Add() }) // a typo first
	h.settle()
	h.fx.take()
	h.do(func() { h.w.SetURL("https://ci.example.com/hook"); h.w.Add() })
	h.settle()
	h.do(func() {
		w := h.w
		if w.CreateErr != nil || w.URLInvalid || w.URL != "" || w.Busy {
			t.Errorf("after a good URL: error %v, field invalid %v, URL %q, busy %v", w.CreateErr, w.URLInvalid, w.URL, w.Busy)
		}
		if w.Secret != "whsec_s2" || w.SecretURL != "https://ci.example.com/hook" {
			t.Errorf("the new webhook's secret shows as %q for %q", w.Secret, w.SecretURL)
		}
		if w.Announce != "Webhook added. Copy its secret now: it is not shown again." {
			t.Errorf("announced %q", w.Announce)
		}
	})
	settingsSame(t, "webhooks", h.urls(), []string{"https://ci.example.com/hook", "https://old.example/hook"})
	settingsSame(t, "effects of a webhook added", h.fx.take(), []string{"clear url", "focus secret 0"})
	settingsSame(t, "calls", h.api.takeCalls(), []string{"POST /api/extensions/7/webhooks", "POST /api/extensions/7/webhooks", "GET /api/extensions/7/webhooks/2/deliveries"})

	h.do(func() {
		h.w.CopySecret()
		if !h.w.Copied || h.w.Announce != "Secret copied." {
			t.Errorf("after Copy: copied %v, announced %q", h.w.Copied, h.w.Announce)
		}
	})
	settingsSame(t, "effects of Copy", h.fx.take(), []string{"copy whsec_s2"})
}

func TestWebhooksAddPressedTwiceAddsOne(t *testing.T) {
	h := newHooksHarness(t)
	release := h.api.hold("POST /api/extensions/7/webhooks")
	h.do(func() { h.w.SetURL("https://ci.example.com/hook"); h.w.Add(); h.w.Add() })
	h.api.waitArrived("POST /api/extensions/7/webhooks")
	h.do(func() {
		if !h.w.Busy {
			t.Error("while adding the form is not busy")
		}
		h.w.Add()
	})
	release()
	h.settle()
	if n := h.api.count("POST /api/extensions/7/webhooks"); n != 1 {
		t.Errorf("Add pressed twice sent %d adds", n)
	}
	settingsSame(t, "webhooks", h.urls(), []string{"https://ci.example.com/hook"})
}

func TestWebhooksTestEventThenItsAnswer(t *testing.T) {
	h := newHooksHarness(t, "https://ci.example.com/hook")
	deliveries := "GET /api/extensions/7/webhooks/1/deliveries"
	release := h.api.hold("POST /api/extensions/7/webhooks/1/test")
	h.do(func() { h.w.Test(1); h.w.Test(1) })
	h.api.waitArrived("POST /api/extensions/7/webhooks/1/test")
	if hook := h.hook(1); !hook.Testing {
		t.Error("while the test event is sent its button is not busy")
	}
	release()
	h.settle()
	if n := h.api.count("POST /api/extensions/7/webhooks/1/test"); n != 1 {
		t.Fatalf("Send test event pressed twice sent %d events", n)
	}
	hook := h.hook(1)
	if hook.Testing || hook.Err != nil || len(hook.Deliveries) != 1 || hook.Deliveries[0].State != betaport.DeliveryPending || hook.Deliveries[0].Type != betaport.EventPing {
		t.Fatalf("after the test event the webhook shows testing %v, error %v, deliveries %+v", hook.Testing, hook.Err, hook.Deliveries)
	}
	h.api.takeCalls()

	// Pending: read again within a second, though the last read set the
	// next one five seconds away. The receiver has not answered yet.
	h.advance(model.WebhookPoll)
	settingsSame(t, "calls a second later", h.api.takeCalls(), []string{deliveries})
	if d := h.hook(1).Deliveries; len(d) != 1 || d[0].State != betaport.DeliveryPending {
		t.Fatalf("before the receiver answers the delivery shows %+v", d)
	}

	// The receiver answers; the next read shows its answer.
	h.api.receiverAnswers(1, 200, "thanks")
	h.advance(model.WebhookPoll)
	settingsSame(t, "calls another second later", h.api.takeCalls(), []string{deliveries})
	d := h.hook(1).Deliveries
	if len(d) != 1 || d[0].State != betaport.DeliveryDelivered || d[0].LastStatus != 200 || d[0].Response != "thanks" {
		t.Fatalf("after the receiver's answer the delivery shows %+v", d)
	}

	// Nothing pending: read every five seconds.
	h.advance(model.WebhookPoll)
	if calls := h.api.takeCalls(); len(calls) != 0 {
		t.Errorf("with nothing pending, a second later: %q", calls)
	}
	h.advance(model.WebhookIdlePoll - model.WebhookPoll)
	settingsSame(t, "calls five seconds later", h.api.takeCalls(), []string{deliveries})
}

func TestWebhooksFailingReceiverShowsItsAnswer(t *testing.T) {
	h := newHooksHarness(t, "https://broken.example/hook")
	h.do(func() { h.w.Test(1) })
	h.settle()
	h.api.receiverAnswers(1, 500, "receiver-is-broken: disk full")
	h.advance(model.WebhookPoll)
	d := h.hook(1).Deliveries
	if len(d) != 1 || d[0].LastStatus != 500 || d[0].Response != "receiver-is-broken: disk full" || d[0].LastError == "" || d[0].State != betaport.DeliveryPending {
		t.Fatalf("a failing receiver's delivery shows %+v", d)
	}
}

func TestWebhooksRemove(t *testing.T) {
	h := newHooksHarness(t, "https://a.example/hook")
	h.do(func() { h.w.SetURL("https://b.example/hook"); h.w.Add() })
	h.settle()
	h.fx.take()
	h.api.takeCalls()

	// Delete asks first; Keep keeps it.
	h.do(func() {
		h.w.Delete(2) // no question open: nothing
		h.w.AskDelete(2)
	})
	if !h.hook(2).Asking {
		t.Fatal("Delete asked nothing")
	}
	settingsSame(t, "effects of Delete", h.fx.take(), []string{"focus confirm 2"})
	h.do(func() { h.w.Keep(2) })
	if h.hook(2).Asking {
		t.Error("Keep left the question open")
	}
	settingsSame(t, "effects of Keep", h.fx.take(), []string{"focus delete 2"})
	h.settle()
	if calls := h.api.takeCalls(); len(calls) != 0 {
		t.Fatalf("Delete and Keep sent %q", calls)
	}

	// Yes, pressed twice: deleted once; it leaves the list with its secret.
	release := h.api.hold("DELETE /api/extensions/7/webhooks/2")
	h.do(func() { h.w.AskDelete(2); h.clock.Advance(model.ConfirmDelay); h.w.Delete(2); h.w.Delete(2) })
	h.api.waitArrived("DELETE /api/extensions/7/webhooks/2")
	if hk := h.hook(2); !hk.Deleting || !hk.Asking {
		t.Errorf("while deleting: deleting %v, asking %v", hk.Deleting, hk.Asking)
	}
	release()
	h.settle()
	if n := h.api.count("DELETE /api/extensions/7/webhooks/2"); n != 1 {
		t.Fatalf("Yes pressed twice sent %d deletes", n)
	}
	settingsSame(t, "webhooks", h.urls(), []string{"https://a.example/hook"})
	h.do(func() {
		if h.w.Secret != "" || h.w.SecretURL != "" {
			t.Errorf("the deleted webhook's secret still shows: %q", h.w.Secret)
		}
		if h.w.Announce != "Webhook https://b.example/hook deleted. It gets no more events." {
			t.Errorf("announced %q", h.w.Announce)
		}
	})
	settingsSame(t, "effects of the delete", h.fx.take(), []string{"focus confirm 2", "focus url 0"})

	// Its deliveries are read no more; the other's still are.
	h.api.takeCalls()
	h.advance(model.WebhookIdlePoll)
	settingsSame(t, "calls after the delete", h.api.takeCalls(), []string{"GET /api/extensions/7/webhooks/1/deliveries"})
}

func TestWebhooksFailedDeleteSaysWhy(t *testing.T) {
	h := newHooksHarness(t, "https://a.example/hook")
	h.api.set(func() {
		h.api.failDelete = &api.Problem{Status: http.StatusServiceUnavailable, Detail: "The service is busy. Try again in a minute."}
	})
	h.do(func() { h.w.AskDelete(1); h.clock.Advance(model.ConfirmDelay); h.w.Delete(1) })
	h.settle()
	hk := h.hook(1)
	if hk.Err == nil || hk.Err.Error() != "The service is busy. Try again in a minute." || hk.Deleting || hk.Asking {
		t.Errorf("a failed delete: error %v, deleting %v, asking %v", hk.Err, hk.Deleting, hk.Asking)
	}
	h.api.set(func() { h.api.failDelete = nil })
	h.do(func() { h.w.AskDelete(1); h.clock.Advance(model.ConfirmDelay); h.w.Delete(1) })
	h.settle()
	if urls := h.urls(); len(urls) != 0 {
		t.Errorf("the retried delete left %q", urls)
	}
}

func TestWebhooksAnswersAfterThePageIsGone(t *testing.T) {
	h := newHooksHarness(t, "https://a.example/hook")
	releaseTest := h.api.hold("POST /api/extensions/7/webhooks/1/test")
	releaseAdd := h.api.hold("POST /api/extensions/7/webhooks")
	h.do(func() { h.w.Test(1); h.w.SetURL("https://b.example/hook"); h.w.Add() })
	h.api.waitArrived("POST /api/extensions/7/webhooks/1/test")
	h.api.waitArrived("POST /api/extensions/7/webhooks")
	h.fx.take()
	h.leave()
	releaseTest()
	releaseAdd()
	h.settle()
	hk := h.hook(1)
	if !hk.Testing || len(hk.Deliveries) != 0 {
		t.Errorf("a test event answered after the page was left shows: testing %v, deliveries %+v", hk.Testing, hk.Deliveries)
	}
	h.do(func() {
		if h.w.Secret != "" || len(h.w.Hooks) != 1 || h.w.URL != "https://b.example/hook" {
			t.Errorf("an add answered after the page was left shows: secret %q, %d webhooks, URL %q", h.w.Secret, len(h.w.Hooks), h.w.URL)
		}
	})
	if fx := h.fx.take(); len(fx) != 0 {
		t.Errorf("answers after the page was left asked it for %q", fx)
	}
	// Its timers read nothing any more.
	h.api.takeCalls()
	h.advance(model.WebhookIdlePoll * 3)
	if calls := h.api.takeCalls(); len(calls) != 0 {
		t.Errorf("after the page was left it still asked %q", calls)
	}
}
