package storetest

import (
	"context"
	"encoding/json"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/betaport/betaport/app/betaport"
)

// MustWebhook adds a webhook of an extension, its secret (whsec_test)
// stored in plain text, as secrets were before they were sealed: a worker
// signs with such a secret as it is, keyring or not.
func MustWebhook(t testing.TB, s betaport.WebhookStore, extensionID int64, url string) *betaport.Webhook {
	t.Helper()
	w := &betaport.Webhook{ExtensionID: extensionID, URL: url, Secret: "whsec_test", CreatedBy: "ada@example.com"}
	if err := s.CreateWebhook(context.Background(), w, unsealed); err != nil {
		t.Fatal(err)
	}
	return w
}

// unsealed stores a secret as it is, as stores did before secrets were
// sealed.
func unsealed(_ int64, secret string) (string, error) { return secret, nil }

// claimAll claims what is due at now for one claimer.
func claimAll(t *testing.T, s betaport.WebhookStore, claimer string, now time.Time) []*betaport.WebhookDelivery {
	t.Helper()
	list, err := s.ClaimDeliveries(context.Background(), claimer, now, time.Minute, 100)
	if err != nil {
		t.Fatal(err)
	}
	return list
}

// Publishing writes one event, and a delivery of it to each webhook that is
// not deleted, in the publish's transaction; a rollback's event says so.
// Deliveries go out in order per webhook, are leased, retried and recorded.
func testWebhooks(t *testing.T, s betaport.Store) {
	ctx := context.Background()
	team := MustTeam(t, s, betaport.PlanProfessional)
	e := MustExtension(t, s, team, "Hooked")
	other := MustExtension(t, s, team, "Other")

	// Bad URLs are refused, naming the field.
	for _, bad := range []string{"", "ftp://x.example/", "/relative", "https://u:p@x.example/", "https://", "https://x.example/" + string(make([]byte, 2048))} {
		err := s.CreateWebhook(ctx, &betaport.Webhook{ExtensionID: e.ID, URL: bad, Secret: "whsec_x", CreatedBy: "a@example.com"}, unsealed)
		wantCode(t, err, betaport.EINVALID)
	}

	// Without webhooks, a publish writes no delivery.
	if err := s.PublishBundle(ctx, newBundle(e.ID, 1)); err != nil {
		t.Fatal(err)
	}
	if got := claimAll(t, s, "a", betaport.Now()); len(got) != 0 {
		t.Fatalf("claimed %d deliveries without a webhook", len(got))
	}

	h1 := MustWebhook(t, s, e.ID, "https://one.example.com/hook")
	h2 := MustWebhook(t, s, e.ID, "https://two.example.com/hook")
	gone := MustWebhook(t, s, e.ID, "https://gone.example.com/hook")
	MustWebhook(t, s, other.ID, "https://other.example.com/hook")
	if err := s.DeleteWebhook(ctx, e.ID, gone.ID, "ada@example.com"); err != nil {
		t.Fatal(err)
	}
	wantCode(t, s.DeleteWebhook(ctx, e.ID, gone.ID, "ada@example.com"), betaport.ENOTFOUND)
	wantCode(t, s.DeleteWebhook(ctx, other.ID, h1.ID, "ada@example.com"), betaport.ENOTFOUND)
	if list, err := s.FindWebhooks(ctx, e.ID, 0, 10); err != nil || len(list) != 2 || list[0].ID != h2.ID || list[0].Secret != "whsec_test" {
		t.Fatalf("FindWebhooks = %+v, %v", list, err)
	}

	b2 := newBundle(e.ID, 2)
	b2.ReleaseNotes = "Fixes the popup."
	if err := s.PublishBundle(ctx, b2); err != nil {
		t.Fatal(err)
	}
	b3 := newBundle(e.ID, 3)
	b3.RollbackOf = 1
	if err := s.PublishBundle(ctx, b3); err != nil {
		t.Fatal(err)
	}

	// One delivery per live webhook is due: each webhook's first event
	// only, as the second waits behind it.
	now := betaport.Now().Add(time.Second)
	first := claimAll(t, s, "a", now)
	if len(first) != 2 {
		t.Fatalf("claimed %d deliveries, want 2 (one per webhook)", len(first))
	}
	byHook := map[int64]*betaport.WebhookDelivery{}
	for _, d := range first {
		byHook[d.WebhookID] = d
		if d.Type != betaport.EventBundlePublished || d.Attempts != 1 || d.Secret != "whsec_test" {
			t.Fatalf("claimed %+v", d)
		}
		var ev betaport.WebhookEvent
		if err := json.Unmarshal(d.Body, &ev); err != nil {
			t.Fatal(err)
		}
		want := betaport.WebhookEvent{ID: d.EventID, Type: betaport.EventBundlePublished, CreatedAt: ev.CreatedAt,
			Extension: betaport.EventExtension{ID: strconv.FormatInt(e.ID, 10), Name: "Hooked"},
			Bundle: &betaport.EventBundle{Number: 2, Version: b2.Version, ReleaseNotes: "Fixes the popup.", SHA256: b2.SHA256,
				DownloadPath: "/api/extensions/" + strconv.FormatInt(e.ID, 10) + "/bundles/2/download"},
			Channel: betaport.DefaultChannel}
		if got, _ := json.Marshal(ev); string(got) != string(mustJSON(t, want)) {
			t.Fatalf("event body = %s\nwant          %s", d.Body, mustJSON(t, want))
		}
	}
	if byHook[h1.ID] == nil || byHook[h2.ID] == nil {
		t.Fatalf("claimed for webhooks %v, want %d and %d", byHook, h1.ID, h2.ID)
	}
	// Leased: nobody else claims them meanwhile, nor the events behind.
	if again := claimAll(t, s, "b", now); len(again) != 0 {
		t.Fatalf("leased deliveries claimed again: %+v", again)
	}

	// h1 fails and retries later; h2 is delivered, so its next is due.
	d1, d2 := byHook[h1.ID], byHook[h2.ID]
	retry := now.Add(10 * time.Second)
	record(t, s, betaport.DeliveryResult{DeliveryID: d1.ID, Attempt: 1, Claimer: "a", Status: 500, Error: "500", Response: "oops", At: now, NextAttemptAt: retry})
	record(t, s, betaport.DeliveryResult{DeliveryID: d2.ID, Attempt: 1, Claimer: "a", Status: 204, At: now, Delivered: true})
	// A result of a lease that is not the claimer's changes nothing.
	record(t, s, betaport.DeliveryResult{DeliveryID: d1.ID, Attempt: 1, Claimer: "b", Status: 200, At: now, Delivered: true})

	next := claimAll(t, s, "a", now)
	if len(next) != 1 || next[0].WebhookID != h2.ID || next[0].Type != betaport.EventBundleRolledBack {
		t.Fatalf("after h2's first delivery, claimed %+v; want h2's rollback event only (h1 waits to retry)", next)
	}
	var ev betaport.WebhookEvent
	json.Unmarshal(next[0].Body, &ev)
	if ev.Bundle == nil || ev.Bundle.RollbackOf != 1 || ev.Bundle.Number != 3 {
		t.Fatalf("rollback event = %s", next[0].Body)
	}
	record(t, s, betaport.DeliveryResult{DeliveryID: next[0].ID, Attempt: 1, Claimer: "a", Status: 200, At: now, Delivered: true})

	// h1's retry is due at its time, still before its second event.
	if got := claimAll(t, s, "a", retry.Add(-time.Millisecond)); len(got) != 0 {
		t.Fatalf("claimed before the retry time: %+v", got)
	}
	got := claimAll(t, s, "a", retry)
	if len(got) != 1 || got[0].ID != d1.ID || got[0].Attempts != 2 {
		t.Fatalf("retry claimed %+v, want delivery %d attempt 2", got, d1.ID)
	}
	// An attempt whose lease ran out is claimed again, as a new attempt,
	// and the first claimer's late result is dropped.
	later := retry.Add(2 * time.Minute)
	got = claimAll(t, s, "b", later)
	if len(got) != 1 || got[0].ID != d1.ID || got[0].Attempts != 3 {
		t.Fatalf("after the lease ran out, claimed %+v", got)
	}
	record(t, s, betaport.DeliveryResult{DeliveryID: d1.ID, Attempt: 2, Claimer: "a", Status: 200, At: later, Delivered: true})
	// No attempt left: failed.
	record(t, s, betaport.DeliveryResult{DeliveryID: d1.ID, Attempt: 3, Claimer: "b", Status: 0, Error: "refused", At: later})

	list, err := s.FindDeliveries(ctx, h1.ID, 0, 10)
	if err != nil || len(list) != 2 {
		t.Fatalf("FindDeliveries = %+v, %v", list, err)
	}
	if d := list[1]; d.State != betaport.DeliveryFailed || d.Attempts != 3 || d.LastError != "refused" || d.NextAttemptAt != nil || d.Secret != "" {
		t.Fatalf("failed delivery = %+v", d)
	}
	// With its first event failed, h1's second is due.
	got = claimAll(t, s, "a", later)
	if len(got) != 1 || got[0].ID != list[0].ID {
		t.Fatalf("after the failure, claimed %+v, want %d", got, list[0].ID)
	}
	record(t, s, betaport.DeliveryResult{DeliveryID: got[0].ID, Attempt: 1, Claimer: "a", Status: 202, Response: "ok", At: later, Delivered: true})
	list, _ = s.FindDeliveries(ctx, h1.ID, 0, 10)
	if d := list[0]; d.State != betaport.DeliveryDelivered || d.LastStatus != 202 || d.Response != "ok" || d.DeliveredAt == nil {
		t.Fatalf("delivered = %+v", d)
	}
	if page, _ := s.FindDeliveries(ctx, h1.ID, list[0].ID, 10); len(page) != 1 || page[0].ID != list[1].ID {
		t.Fatalf("second page = %+v", page)
	}

	// A ping goes to one webhook; deleting it fails what is pending.
	ping, err := s.PingWebhook(ctx, e.ID, h2.ID)
	if err != nil || ping.Type != betaport.EventPing || ping.State != betaport.DeliveryPending || ping.NextAttemptAt == nil {
		t.Fatalf("PingWebhook = %+v, %v", ping, err)
	}
	_, err = s.PingWebhook(ctx, other.ID, h2.ID)
	wantCode(t, err, betaport.ENOTFOUND)
	if err := s.DeleteWebhook(ctx, e.ID, h2.ID, "ada@example.com"); err != nil {
		t.Fatal(err)
	}
	if got := claimAll(t, s, "a", later.Add(time.Hour)); len(got) != 0 {
		t.Fatalf("a deleted webhook's delivery was claimed: %+v", got)
	}
	list, _ = s.FindDeliveries(ctx, h2.ID, 0, 1)
	if d := list[0]; d.ID != ping.ID || d.State != betaport.DeliveryFailed || d.LastError == "" {
		t.Fatalf("pending delivery of a deleted webhook = %+v", d)
	}
	_, err = s.FindWebhook(ctx, e.ID, h2.ID)
	wantCode(t, err, betaport.ENOTFOUND)

	// The audit trail says who added and deleted webhooks.
	events, _ := s.FindAuditEvents(ctx, e.ID, 0, 1)
	if len(events) != 1 || events[0].Action != betaport.AuditWebhookDeleted || events[0].Subject != h2.URL {
		t.Fatalf("audit = %+v", events)
	}

	// Sign publishes an upload: one event, however often it is retried.
	h3 := MustWebhook(t, s, e.ID, "https://three.example.com/hook")
	u := &betaport.Upload{ExtensionID: e.ID, ExpiresAt: betaport.Now().Add(time.Hour)}
	if err := s.CreateUpload(ctx, u); err != nil {
		t.Fatal(err)
	}
	if err := s.ReceiveUpload(ctx, u.ID, 100, newBundle(e.ID, 9).SHA256); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, _, err := s.PublishUpload(ctx, u.ID, newBundle(e.ID, 9)); err != nil {
			t.Fatal(err)
		}
	}
	if list, _ := s.FindDeliveries(ctx, h3.ID, 0, 10); len(list) != 1 || list[0].Type != betaport.EventBundlePublished {
		t.Fatalf("after a sign and its retry, deliveries = %+v", list)
	}

	// A rollback is one bundle.rolled_back event, however often asked.
	for range 2 {
		rb := newBundle(e.ID, 2)
		rb.RollbackOf = 2
		if _, _, err := s.PublishRollback(ctx, rb, "ada@example.com"); err != nil {
			t.Fatal(err)
		}
	}
	list, _ = s.FindDeliveries(ctx, h3.ID, 0, 10)
	if len(list) != 2 || list[0].Type != betaport.EventBundleRolledBack {
		t.Fatalf("after a rollback and its retry, deliveries = %+v", list)
	}
	// h1 gets both events too: deliver everything, in order, and keep
	// what reached h3.
	var toH3 []*betaport.WebhookDelivery
	for round := 0; round < 3; round++ {
		for _, d := range claimAll(t, s, "c", later.Add(2*time.Hour)) {
			if d.WebhookID == h3.ID {
				toH3 = append(toH3, d)
			}
			record(t, s, betaport.DeliveryResult{DeliveryID: d.ID, Attempt: d.Attempts, Claimer: "c", Status: 200, At: later, Delivered: true})
		}
	}
	var rev betaport.WebhookEvent
	if len(toH3) != 2 || json.Unmarshal(toH3[1].Body, &rev) != nil || rev.Type != betaport.EventBundleRolledBack ||
		rev.Bundle.RollbackOf != 2 || rev.Bundle.SHA256 != newBundle(e.ID, 2).SHA256 || toH3[0].Type != betaport.EventBundlePublished {
		t.Fatalf("h3 got %+v; want the published, then the rolled-back event (%+v)", toH3, rev)
	}
}

// An attempt claimed and never finished (the process that claimed it
// died: its result was never recorded) is picked up again once its lease
// runs out, as the next attempt, and the deliveries list says why there
// was another: the attempt before was interrupted, with no answer (not
// the status and answer of an older attempt).
func testInterruptedDelivery(t *testing.T, s betaport.Store) {
	ctx := context.Background()
	e := MustExtension(t, s, MustTeam(t, s, betaport.PlanProfessional), "Hooked")
	hook := MustWebhook(t, s, e.ID, "https://hooks.example.com/")
	if _, err := s.PingWebhook(ctx, e.ID, hook.ID); err != nil {
		t.Fatal(err)
	}
	listed := func() *betaport.WebhookDelivery {
		t.Helper()
		list, err := s.FindDeliveries(ctx, hook.ID, 0, 10)
		if err != nil || len(list) != 1 {
			t.Fatalf("deliveries = %v, %v; want 1", list, err)
		}
		return list[0]
	}
	now := betaport.Now().Add(time.Second)
	// Attempt 1 fails with an answer; attempt 2 is claimed by a process
	// that dies before recording anything.
	first := claimAll(t, s, "host-a/1", now)
	if len(first) != 1 {
		t.Fatalf("claimed %d, want 1", len(first))
	}
	record(t, s, betaport.DeliveryResult{DeliveryID: first[0].ID, Attempt: 1, Claimer: "host-a/1", Status: 503, Error: "The receiver answered 503.",
		Response: "busy", At: now, NextAttemptAt: now})
	if got := claimAll(t, s, "host-a/1", now); len(got) != 1 || got[0].Attempts != 2 {
		t.Fatalf("attempt 2 claimed %+v", got)
	}
	// While its lease runs, it is the dead process's: nothing is said yet.
	if d := listed(); d.Attempts != 2 || d.LastStatus != 503 || d.LastError != "The receiver answered 503." {
		t.Fatalf("during attempt 2's lease the delivery shows %+v; want attempt 1's outcome", d)
	}
	// Another process (a restart, a replica) picks it up once the lease
	// ran out: attempt 3, and attempt 2 shows as interrupted.
	later := now.Add(2 * time.Minute)
	third := claimAll(t, s, "host-b/2", later)
	if len(third) != 1 || third[0].Attempts != 3 {
		t.Fatalf("after the lease ran out, claimed %+v; want attempt 3", third)
	}
	if d := listed(); d.State != betaport.DeliveryPending || d.Attempts != 3 || d.LastError != betaport.DeliveryInterrupted || d.LastStatus != 0 || d.Response != "" {
		t.Fatalf("the delivery shows %+v; want attempt 3 under way after attempt 2 was interrupted (no status, no answer)", d)
	}
	// The dead process's late result (were it not dead, but only slow)
	// changes nothing; the new attempt's outcome is what shows.
	record(t, s, betaport.DeliveryResult{DeliveryID: first[0].ID, Attempt: 2, Claimer: "host-a/1", Status: 200, At: later, Delivered: true})
	if d := listed(); d.State != betaport.DeliveryPending || d.LastError != betaport.DeliveryInterrupted {
		t.Fatalf("a stale result was recorded: %+v", d)
	}
	record(t, s, betaport.DeliveryResult{DeliveryID: first[0].ID, Attempt: 3, Claimer: "host-b/2", Status: 500, Error: "The receiver answered 500.",
		Response: "oops", At: later, NextAttemptAt: later})
	if d := listed(); d.Attempts != 3 || d.LastStatus != 500 || d.LastError != "The receiver answered 500." || d.Response != "oops" {
		t.Fatalf("after attempt 3 the delivery shows %+v", d)
	}
	// An attempt handed back (a worker closing) is not interrupted by a
	// crash: the next claim leaves what was recorded.
	fourth := claimAll(t, s, "host-b/2", later)
	record(t, s, betaport.DeliveryResult{DeliveryID: fourth[0].ID, Attempt: 4, Claimer: "host-b/2", Error: "Handed back.", At: later, NextAttemptAt: later})
	if got := claimAll(t, s, "host-c/3", later); len(got) != 1 || got[0].Attempts != 5 {
		t.Fatalf("attempt 5 claimed %+v", got)
	}
	if d := listed(); d.LastError != "Handed back." {
		t.Fatalf("after a handed-back attempt the delivery shows %q", d.LastError)
	}
}

func record(t *testing.T, s betaport.WebhookStore, r betaport.DeliveryResult) {
	t.Helper()
	if err := s.RecordDelivery(context.Background(), r); err != nil {
		t.Fatal(err)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// RunClaimRace checks that stores sharing one database (replicas) never
// both claim one attempt of a delivery: they race to claim, record a
// failure with an immediate retry, and claim again, many times over.
func RunClaimRace(t *testing.T, stores []betaport.Store) {
	ctx := context.Background()
	s := stores[0]
	team := MustTeam(t, s, betaport.PlanProfessional)
	e := MustExtension(t, s, team, "Raced")
	const hooks, events, rounds = 4, 3, 5
	for i := range hooks {
		MustWebhook(t, s, e.ID, "https://h"+strconv.Itoa(i)+".example.com/")
	}
	for i := range events {
		if err := s.PublishBundle(ctx, newBundle(e.ID, i+1)); err != nil {
			t.Fatal(err)
		}
	}
	type attempt struct {
		delivery int64
		n        int
	}
	var mu sync.Mutex
	claimed := map[attempt]string{}
	var wg sync.WaitGroup
	start := betaport.Now().Add(time.Second)
	for i, st := range stores {
		for w := range 3 { // several workers per replica, too
			claimer := "replica" + strconv.Itoa(i) + "/" + strconv.Itoa(w)
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range hooks * events * (rounds + 1) * 4 {
					list, err := st.ClaimDeliveries(ctx, claimer, start, time.Hour, 2)
					if err != nil {
						t.Error(err)
						return
					}
					for _, d := range list {
						a := attempt{d.ID, d.Attempts}
						mu.Lock()
						if prev, ok := claimed[a]; ok {
							t.Errorf("attempt %d of delivery %d claimed by %s and %s", a.n, a.delivery, prev, claimer)
						}
						claimed[a] = claimer
						mu.Unlock()
						r := betaport.DeliveryResult{DeliveryID: d.ID, Attempt: d.Attempts, Claimer: claimer, At: start, Status: 500, NextAttemptAt: start}
						if d.Attempts > rounds {
							r.Status, r.Delivered = 200, true
						}
						if err := st.RecordDelivery(ctx, r); err != nil {
							t.Error(err)
						}
					}
				}
			}()
		}
	}
	wg.Wait()
	// Every delivery was attempted rounds+1 times, each attempt once.
	if want := hooks * events * (rounds + 1); len(claimed) != want {
		t.Errorf("%d attempts claimed, want %d", len(claimed), want)
	}
}

// Finished deliveries older than the cut-off are pruned, with the events
// nothing else needs; a pending one, and everything newer, stays whole.
func testPruneDeliveries(t *testing.T, s betaport.Store) {
	ctx := context.Background()
	team := MustTeam(t, s, betaport.PlanProfessional)
	e := MustExtension(t, s, team, "Pruned")
	h := MustWebhook(t, s, e.ID, "https://prune.example.com/hook")
	ping := func() *betaport.WebhookDelivery {
		t.Helper()
		d, err := s.PingWebhook(ctx, e.ID, h.ID)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	claimOne := func(want int64) {
		t.Helper()
		if got := claimAll(t, s, "p", betaport.Now()); len(got) != 1 || got[0].ID != want {
			t.Fatalf("claimed %+v, want delivery %d", got, want)
		}
	}
	delivered, failed := ping(), (*betaport.WebhookDelivery)(nil)
	claimOne(delivered.ID)
	record(t, s, betaport.DeliveryResult{DeliveryID: delivered.ID, Attempt: 1, Claimer: "p", Status: 204, At: betaport.Now(), Delivered: true})
	failed = ping()
	claimOne(failed.ID)
	record(t, s, betaport.DeliveryResult{DeliveryID: failed.ID, Attempt: 1, Claimer: "p", Status: 500, Error: "gave up", At: betaport.Now()})
	pending := ping()
	list := func() []*betaport.WebhookDelivery {
		t.Helper()
		l, err := s.FindDeliveries(ctx, h.ID, 0, 10)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}

	// Nothing is old enough yet.
	if n, err := s.PruneDeliveries(ctx, betaport.Now().Add(-time.Hour)); err != nil || n != 0 {
		t.Fatalf("PruneDeliveries(an hour ago) = %d, %v; want 0", n, err)
	}
	if got := list(); len(got) != 3 {
		t.Fatalf("after a prune with nothing old, %d deliveries are listed; want 3", len(got))
	}

	// All three are older than this cut-off: the finished two go.
	if n, err := s.PruneDeliveries(ctx, betaport.Now().Add(time.Minute)); err != nil || n != 2 {
		t.Fatalf("PruneDeliveries(now) = %d, %v; want 2 (the delivered and the failed)", n, err)
	}
	got := list()
	if len(got) != 1 || got[0].ID != pending.ID || got[0].State != betaport.DeliveryPending {
		t.Fatalf("after the prune the list is %+v; want only the pending delivery %d", got, pending.ID)
	}
	// The pending one is still sent, its event whole.
	if c := claimAll(t, s, "p", betaport.Now()); len(c) != 1 || c[0].ID != pending.ID || len(c[0].Body) == 0 || string(c[0].Body) != string(pending.Body) {
		t.Fatalf("after the prune the worker claims %+v; want delivery %d with its event %q", c, pending.ID, pending.Body)
	}
	// Pruning again removes nothing more.
	if n, err := s.PruneDeliveries(ctx, betaport.Now().Add(time.Minute)); err != nil || n != 0 {
		t.Fatalf("a second prune = %d, %v; want 0", n, err)
	}
}
