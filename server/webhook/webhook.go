// Package webhook sends extensions' events to their webhooks: a worker
// that leases due deliveries from the store's outbox, signs each event,
// POSTs it and records what the receiver answered, retrying with backoff.
//
// Every replica runs one. The leases are rows in the shared database, so
// replicas never both send one attempt; per webhook, events go out in
// order, as the store only hands out a webhook's earliest pending delivery.
package webhook

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/server/keyring"
	"github.com/betaport/betaport/server/metrics"
)

// Headers of every POST.
const (
	HeaderEvent     = "Betaport-Event"
	HeaderDelivery  = "Betaport-Delivery"
	HeaderSignature = "Betaport-Signature"
)

// Defaults.
const (
	DefaultRetryMin = 10 * time.Second
	MaxRetry        = time.Hour
	DefaultPoll     = 3 * time.Second
	// Timeout bounds one attempt, from dialling to the answer's excerpt.
	Timeout = 10 * time.Second
	// lease is how long a claimed attempt is the claimer's: well over
	// Timeout, so a live worker always records before another may retry.
	lease = time.Minute
	batch = 16
)

// Worker delivers the events of one store. Set its fields, then Start.
type Worker struct {
	Store  betaport.WebhookStore
	Logger *slog.Logger
	// Metrics records each attempt's outcome; nil records nothing.
	Metrics *metrics.Metrics
	// RetryMin is the wait after a first failed attempt; each next wait
	// doubles, up to MaxRetry. 0 means DefaultRetryMin.
	RetryMin time.Duration
	// AllowPrivate lets events go to addresses that are not public
	// (privateAddr: loopback, private, link-local, reserved…): tests, and
	// services on one private network.
	AllowPrivate bool
	// Keyring opens webhooks' sealed secrets (the service's keyring);
	// secrets stored in plain text, from before sealing, need none.
	Keyring *keyring.Keyring
	// Poll is how often the store is asked for due deliveries when
	// nothing nudged the worker; 0 means DefaultPoll.
	Poll time.Duration
	// Now is the clock (tests); nil means time.Now.
	Now func() time.Time

	id     string
	client *http.Client
	stop   context.CancelFunc
	done   chan struct{}
	once   sync.Once
}

// Sign returns the Betaport-Signature value of body sent at t: the Unix
// time, and the hex HMAC-SHA256 of "<t>.<body>" keyed with the secret.
func Sign(secret string, t time.Time, body []byte) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(ts))
	m.Write([]byte("."))
	m.Write(body)
	return "t=" + ts + ",v1=" + hex.EncodeToString(m.Sum(nil))
}

// Start runs the worker until Close.
func (w *Worker) Start() {
	if w.Logger == nil {
		w.Logger = slog.Default()
	}
	if w.RetryMin <= 0 {
		w.RetryMin = DefaultRetryMin
	}
	if w.Poll <= 0 {
		w.Poll = DefaultPoll
	}
	host, _ := os.Hostname()
	raw := make([]byte, 6)
	rand.Read(raw)
	w.id = host + "/" + hex.EncodeToString(raw)
	w.client = newClient(w.AllowPrivate)
	ctx, cancel := context.WithCancel(context.Background())
	w.stop, w.done = cancel, make(chan struct{})
	go w.run(ctx)
}

// Close stops the worker and waits for attempts under way (at most
// Timeout). Closing twice, or a worker never started, is fine.
func (w *Worker) Close() error {
	w.once.Do(func() {
		if w.stop != nil {
			w.stop()
			<-w.done
		}
	})
	return nil
}

func (w *Worker) now() time.Time {
	if w.Now != nil {
		return w.Now().UTC().Truncate(time.Millisecond)
	}
	return betaport.Now()
}

func (w *Worker) run(ctx context.Context) {
	defer close(w.done)
	t := time.NewTicker(w.Poll)
	defer t.Stop()
	for {
		// Work until nothing is due, then wait for a nudge or the poll.
		for ctx.Err() == nil {
			n, err := w.RunOnce(ctx)
			if err != nil && ctx.Err() == nil {
				w.Logger.Warn("webhooks: claiming deliveries", "err", err)
			}
			if n == 0 || err != nil {
				break
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-w.Store.DeliveriesAdded():
		case <-t.C:
		}
	}
}

// RunOnce claims the deliveries due now and attempts each, one goroutine
// per webhook (the store gives at most one delivery per webhook), and
// returns how many it attempted. The worker must have been started.
func (w *Worker) RunOnce(ctx context.Context) (int, error) {
	if w.client == nil {
		return 0, errors.New("webhook: RunOnce on a worker that was not started")
	}
	list, err := w.Store.ClaimDeliveries(ctx, w.id, w.now(), lease, batch)
	var wg sync.WaitGroup
	for _, d := range list {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.attempt(ctx, d)
		}()
	}
	wg.Wait()
	return len(list), err
}

// attempt sends one claimed delivery and records the result.
func (w *Worker) attempt(ctx context.Context, d *betaport.WebhookDelivery) {
	started := time.Now()
	status, excerpt, sendErr := w.send(ctx, d)
	took := time.Since(started).Seconds()
	at := w.now()
	if ctx.Err() != nil {
		// Closing cut the attempt short: hand the delivery back at once,
		// rather than leave it leased, so another replica (or this one,
		// restarted) sends it again (at least once).
		err := w.Store.RecordDelivery(context.WithoutCancel(ctx), betaport.DeliveryResult{DeliveryID: d.ID, Attempt: d.Attempts,
			Claimer: w.id, At: at, NextAttemptAt: at, Error: betaport.DeliveryInterrupted})
		if err != nil {
			w.Logger.Warn("webhooks: handing back a delivery", "delivery", d.ID, "err", err)
		}
		return
	}
	r := betaport.DeliveryResult{DeliveryID: d.ID, Attempt: d.Attempts, Claimer: w.id, Status: status,
		Response: excerpt, At: at, Delivered: sendErr == nil && status >= 200 && status < 300}
	switch {
	case r.Delivered:
	case sendErr != nil:
		r.Error = sendErr.Error()
	default:
		r.Error = fmt.Sprintf("The receiver answered %d %s; only a 2xx answer delivers.", status, http.StatusText(status))
	}
	outcome := metrics.WebhookDelivered
	var refused *refusedError
	if !r.Delivered {
		next := at.Add(Backoff(w.RetryMin, d.Attempts))
		switch {
		case errors.As(sendErr, &refused):
			// The service's own setting refused it: another attempt
			// would be refused the same way, for a day.
			r.Error += " It is not retried."
			outcome = metrics.WebhookGaveUp
		case next.Before(d.ExpiresAt):
			r.NextAttemptAt, outcome = next, metrics.WebhookFailed
		default:
			r.Error += " No attempt is left: events are retried for 24 hours."
			outcome = metrics.WebhookGaveUp
		}
	}
	w.Metrics.WebhookAttempt(outcome, took)
	if !r.Delivered {
		// What an operator watches: a receiver that fails (the URL, never
		// its query: it may hold a token).
		w.Logger.Warn("webhook attempt failed", "delivery", d.ID, "outcome", outcome, "attempt", d.Attempts, "error", r.Error)
	}
	if err := w.Store.RecordDelivery(context.WithoutCancel(ctx), r); err != nil {
		w.Logger.Warn("webhooks: recording a delivery", "delivery", d.ID, "err", err)
	}
}

// Backoff is the wait after the attempts-th failed attempt: min, doubling,
// at most MaxRetry.
func Backoff(min time.Duration, attempts int) time.Duration {
	d := min
	for i := 1; i < attempts && d < MaxRetry; i++ {
		d *= 2
	}
	return minDuration(d, MaxRetry)
}

func minDuration(a, b time.Duration) time.Duration {
	if a < b {
		return a
	}
	return b
}

// send POSTs the event and returns the answer's status and the start of
// its body.
func (w *Worker) send(ctx context.Context, d *betaport.WebhookDelivery) (int, string, error) {
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.URL, bytes.NewReader(d.Body))
	if err != nil {
		return 0, "", errors.New("The webhook URL cannot be requested: " + err.Error())
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "Betaport-Webhooks/1")
	req.Header.Set(HeaderEvent, d.Type)
	req.Header.Set(HeaderDelivery, strconv.FormatInt(d.ID, 10))
	secret, err := OpenSecret(w.Keyring, d.WebhookID, d.Secret)
	if err != nil {
		// Never sent unsigned. The keyring is the operator's to mend (or
		// the admin adds the webhook again): retried meanwhile.
		return 0, "", fmt.Errorf("The webhook's secret cannot be opened (%v), so the event cannot be signed: "+
			"the service must be given the keyring it was sealed with, or the webhook deleted and added again.", err)
	}
	req.Header.Set(HeaderSignature, Sign(secret, time.Now(), d.Body))
	resp, err := w.client.Do(req)
	if err != nil {
		return 0, "", explain(err)
	}
	defer resp.Body.Close()
	// The status decides; a body cut short still leaves its start.
	b, _ := io.ReadAll(io.LimitReader(resp.Body, betaport.MaxDeliveryResponse))
	return resp.StatusCode, excerptOf(b), nil
}

// excerptOf keeps what of b is text: valid UTF-8 without NULs (which
// PostgreSQL's text refuses), cut at a whole character.
func excerptOf(b []byte) string {
	for len(b) > 0 && !utf8.Valid(b) {
		r, size := utf8.DecodeLastRune(b)
		if r != utf8.RuneError || size != 1 {
			break
		}
		b = b[:len(b)-1]
	}
	return strings.ReplaceAll(strings.ToValidUTF8(string(b), "\uFFFD"), "\x00", "\uFFFD")
}

// explain turns a failed request into a sentence for the deliveries list.
func explain(err error) error {
	var refused *refusedError
	if errors.As(err, &refused) {
		return refused
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	if errors.Is(err, context.DeadlineExceeded) || os.IsTimeout(err) {
		return errors.New("No answer within 10 seconds.")
	}
	return errors.New("The request failed: " + err.Error())
}

// Refusal says why the service refuses to send to rawURL, as a field
// error, when its host is an address that is not public (privateAddr:
// loopback, private, link-local, reserved, or an IPv6 address carrying
// such an IPv4 one), however it is spelt, or a name that always means loopback
// (localhost) or a local network (.local, .home.arpa, .internal): nil otherwise, and for names, whose addresses are checked
// at each delivery. A service started with --webhooks-allow-private sends
// to them, and does not ask.
func Refusal(rawURL string) error {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil // ValidateWebhookURL says what is wrong with it
	}
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	why := ""
	if ip, err := netip.ParseAddr(host); err == nil {
		why = privateAddr(ip.Unmap())
	} else if ip, ok := legacyIPv4(host); ok {
		why = privateAddr(ip)
	} else if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		why = "a loopback name"
	} else if zone := localZone(host); zone != "" {
		why = "a name of a local network (" + zone + ")"
	}
	if why == "" {
		return nil
	}
	return &betaport.Error{Code: betaport.EINVALID, Param: "url", Message: u.Hostname() + " is " + why +
		": webhooks go only to public addresses, so no event would ever reach it. Give the receiver's public address" +
		" (a service whose receivers are on its own network is started with --webhooks-allow-private)."}
}

// localZones are the special-use domains whose names only a local network
// answers: multicast DNS (.local, RFC 6762), home networks (.home.arpa,
// RFC 8375) and private use (.internal, reserved by ICANN in 2024). A
// webhook named under one could never be a public receiver.
var localZones = []string{"local", "home.arpa", "internal"}

// localZone is the local-network domain host is under, or "".
func localZone(host string) string {
	for _, z := range localZones {
		if host == z || strings.HasSuffix(host, "."+z) {
			return "." + z
		}
	}
	return ""
}

// legacyIPv4 reads host as the C library's inet_aton does, and browsers
// and curl with it: one to four parts, each decimal, hex (0x) or octal
// (a leading 0), the last filling the bytes left ("127.1", "2130706433",
// "0x7f.0.0.1", "0177.0.0.1" are all 127.0.0.1). Such a host names an
// address, not a name to look up.
func legacyIPv4(host string) (netip.Addr, bool) {
	parts := strings.Split(host, ".")
	if host == "" || len(parts) > 4 {
		return netip.Addr{}, false
	}
	nums := make([]uint64, len(parts))
	for i, p := range parts {
		base, digits := 10, p
		switch {
		case strings.HasPrefix(p, "0x"):
			base, digits = 16, p[2:]
		case len(p) > 1 && p[0] == '0':
			base, digits = 8, p[1:]
		}
		n, err := strconv.ParseUint(digits, base, 32)
		if err != nil || digits == "" && base != 8 {
			return netip.Addr{}, false
		}
		nums[i] = n
	}
	var v uint64
	for i, n := range nums[:len(nums)-1] {
		if n > 255 {
			return netip.Addr{}, false
		}
		v |= n << (24 - 8*i)
	}
	last := nums[len(nums)-1]
	if last >= 1<<(8*(5-len(nums))) && len(nums) > 1 || last > 0xffffffff {
		return netip.Addr{}, false
	}
	v |= last
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true
}

// refusedError is a destination refused at dial time.
type refusedError struct{ addr, why string }

func (e *refusedError) Error() string {
	return "Refused to connect to " + e.addr + ": it is " + e.why +
		". Webhooks go only to public addresses (a service may allow private ones with --webhooks-allow-private)."
}

// newClient is the HTTP client of deliveries: no proxy (the dial check
// must see the receiver's address), no redirects (a 3xx is an answer, not
// a delivery), and, unless allowPrivate, a dialer that refuses addresses
// inside the service's own networks, checked on the address it connects
// to, after name resolution, so a name cannot point it there.
func newClient(allowPrivate bool) *http.Client {
	dialer := &net.Dialer{Timeout: Timeout}
	if !allowPrivate {
		dialer.Control = func(network, address string, _ syscall.RawConn) error { return refuseDial(network, address) }
	}
	return &http.Client{
		Transport: &http.Transport{
			DialContext:           dialer.DialContext,
			TLSHandshakeTimeout:   Timeout,
			ResponseHeaderTimeout: Timeout,
			MaxIdleConnsPerHost:   2,
			IdleConnTimeout:       time.Minute,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// refuseDial is the dialer's check of each connection it is about to make,
// to address (an IP and port, resolved): a refusedError when the IP is not
// public. Every connection is checked, whatever name it was made for, so a
// name that resolves to a private address, or is changed to one after it
// was checked (DNS rebinding), is refused too.
func refuseDial(network, address string) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return err
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return &refusedError{address, "not an IP address"}
	}
	if why := privateAddr(ip.Unmap()); why != "" {
		return &refusedError{host, why}
	}
	return nil
}

// notPublic are the ranges netip's predicates do not name that are still
// not the public Internet's, with why: a webhook never goes there.
var notPublic = []struct {
	prefix netip.Prefix
	why    string
}{
	{netip.MustParsePrefix("0.0.0.0/8"), "an address of \"this network\" (0.0.0.0/8), which reaches the service's own host"},
	{netip.MustParsePrefix("100.64.0.0/10"), "a private address"}, // carrier-grade NAT
	{netip.MustParsePrefix("192.0.0.0/24"), "a reserved address (IETF protocol assignments)"},
	{netip.MustParsePrefix("192.0.2.0/24"), "a reserved address (documentation)"},
	{netip.MustParsePrefix("192.88.99.0/24"), "a reserved address (the 6to4 relay anycast, deprecated by RFC 7526)"},
	{netip.MustParsePrefix("198.18.0.0/15"), "a reserved address (benchmarking)"},
	{netip.MustParsePrefix("198.51.100.0/24"), "a reserved address (documentation)"},
	{netip.MustParsePrefix("203.0.113.0/24"), "a reserved address (documentation)"},
	{netip.MustParsePrefix("240.0.0.0/4"), "a reserved address (240.0.0.0/4, and broadcast)"},
	{netip.MustParsePrefix("fec0::/10"), "a site-local address"},
	{netip.MustParsePrefix("64:ff9b:1::/48"), "a local-use NAT64 address (64:ff9b:1::/48), which reaches the service's own network"},
	// Teredo tunnels through a relay to an IPv4 address the address
	// hides: it cannot be checked, so it is not taken.
	{netip.MustParsePrefix("2001::/32"), "a Teredo tunnel address, whose IPv4 end cannot be checked"},
	{netip.MustParsePrefix("2001:2::/48"), "a reserved address (benchmarking)"},
	{netip.MustParsePrefix("2001:db8::/32"), "a reserved address (documentation)"},
	{netip.MustParsePrefix("3fff::/20"), "a reserved address (documentation, RFC 9637)"},
	{netip.MustParsePrefix("2001:10::/28"), "a reserved address (ORCHID, not routed)"},
	{netip.MustParsePrefix("2001:20::/28"), "a reserved address (ORCHIDv2, not routed)"},
	{netip.MustParsePrefix("100::/64"), "a reserved address (discard)"},
}

// embedding are the IPv6 ranges whose addresses carry an IPv4 address,
// reached through it: such an address is as public as the one it carries.
var embedding = []struct {
	prefix netip.Prefix
	kind   string
	at     int // the IPv4 address's first byte in the IPv6 one
}{
	{netip.MustParsePrefix("64:ff9b::/96"), "a NAT64 address", 12},
	{netip.MustParsePrefix("2002::/16"), "a 6to4 address", 2},
	{netip.MustParsePrefix("::ffff:0:0:0/96"), "an IPv4-translated address", 12},
	{netip.MustParsePrefix("::/96"), "an IPv4-compatible address", 12}, // after :: and ::1
}

var globalUnicast = netip.MustParsePrefix("2000::/3")

// privateAddr says why ip is not a public address, or "" when it is.
func privateAddr(ip netip.Addr) string {
	ip = ip.Unmap()
	switch {
	case ip.IsLoopback():
		return "a loopback address"
	case ip.IsUnspecified():
		return "the unspecified address"
	case ip.IsMulticast():
		return "a multicast address"
	case ip.IsPrivate():
		return "a private address"
	case ip.IsLinkLocalUnicast():
		return "a link-local address"
	}
	for _, r := range notPublic {
		if r.prefix.Contains(ip.WithZone("")) {
			return r.why
		}
	}
	for _, e := range embedding {
		if e.prefix.Contains(ip.WithZone("")) {
			b := ip.As16()
			v4 := netip.AddrFrom4([4]byte(b[e.at : e.at+4]))
			if why := privateAddr(v4); why != "" {
				return e.kind + " of " + v4.String() + ", " + why
			}
			return ""
		}
	}
	if ip.Is6() && !globalUnicast.Contains(ip.WithZone("")) {
		return "an IPv6 address outside the global unicast range (2000::/3)"
	}
	return ""
}
