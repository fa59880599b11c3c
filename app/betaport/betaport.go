// Package betaport holds Betaport's domain: its types with their rules
// (Validate), its errors and the stores every storage backend implements.
//
// It imports only the standard library: the browser app links it into the
// wasm (the wire package, app/api, carries these types), and the server's
// implementations live in packages named after what they wrap (sqldb,
// blobstore, http, publish).
package betaport

import (
	"context"
	"fmt"
	"log/slog"
	"time"
)

// Session is a signed-in browser: an admin's or a tester's. Only the hash of
// its token is kept.
type Session struct {
	TokenHash string
	UserID    int64 // set for an admin
	TesterID  int64 // set for a tester
	CreatedAt time.Time
	ExpiresAt time.Time
}

// TesterFilter selects a page of an extension's testers, newest first.
type TesterFilter struct {
	ExtensionID int64
	Query       string // part of the e-mail or name
	Status      string // "" for every status
	Channel     string // "" for every channel
	BeforeID    int64  // keyset: only testers with a smaller id (0: from the newest)
	Limit       int
	// Behind, when not "", keeps the testers (not revoked) whose copy last
	// reported another version than this one, the current build's.
	Behind string
	// SilentSince, when not zero, keeps the testers (not revoked) whose
	// copy checked for updates, but not since then.
	SilentSince time.Time
	// Installed keeps the testers (not revoked) who have an update token:
	// whose copy was packed before and may be again.
	Installed bool
}

// Filters of the testers list beside the statuses (?status=): copies
// behind the current build, and copies silent for SilentDays.
const (
	TestersBehind = "behind"
	TestersSilent = "silent"
	SilentDays    = 7
)

// CRX is a bundle's signed CRX3 package as stored. The package embeds the
// update URL, so it is rebuilt when the extension's update token changes.
type CRX struct {
	BlobKey string // "" until built
	Size    int64
	SHA256  string
	// TokenHash is the hash of the update token its manifest's update_url
	// carries.
	TokenHash string
	// HeaderSize, TailAt and State make a tester's copy of the package,
	// whose manifest names the tester's own update URL (see package crx,
	// Template; State is its hash state in base64). State is empty for a
	// package packed before them.
	HeaderSize, TailAt int64
	State              string
}

// Personal reports whether testers' copies can be made from the package.
func (c CRX) Personal() bool { return c.BlobKey != "" && len(c.State) > 0 }

// Signing is what makes an extension's CRX packages: the private key that
// signs them (so fixes the extension's Chrome ID) and the secret token in its
// update URL. It never leaves the server: no API response carries it, and it
// formats and logs as [redacted].
type Signing struct {
	ExtensionID int64
	PrivateKey  []byte // PKCS#8 PEM of an RSA-2048 key
	UpdateToken string
	CreatedAt   time.Time
	RotatedAt   *time.Time
}

func (s Signing) String() string             { return "[redacted]" }
func (s Signing) GoString() string           { return "[redacted]" }
func (s Signing) LogValue() slog.Value       { return slog.StringValue("[redacted]") }
func (s Signing) Format(f fmt.State, _ rune) { f.Write([]byte("[redacted]")) }

// Upload states. An upload is requested (URL issued), received (zip
// stored), then published, or rejected (validation failed), superseded (a
// newer URL was issued first) or expired (no zip before its URL expired).
const (
	UploadRequested  = "requested"
	UploadReceived   = "received"
	UploadPublished  = "published"
	UploadRejected   = "rejected"
	UploadSuperseded = "superseded"
	UploadExpired    = "expired"
)

// Upload is one zip submitted through the submit flow.
type Upload struct {
	ID           int64
	ExtensionID  int64
	State        string
	Size         int64
	SHA256       string
	Problems     []ZipProblem // why it was rejected
	BundleNumber int64        // the bundle it became
	CreatedAt    time.Time
	ExpiresAt    time.Time
	ReceivedAt   *time.Time
	ReleaseNotes string // what call 1 said about the build
	// Channel and Percent are where call 1 said the build goes: the channel
	// (DefaultChannel when empty) and the share of its testers (all when 0).
	Channel string
	Percent int
}

// ExtensionFilter narrows FindExtensions. Zero fields match everything.
type ExtensionFilter struct {
	TeamID int64
}

// Betaport's records are kept by small stores, one per entity, so each
// caller names what it reads and writes (package publish takes the
// publishing ones). SQLite and PostgreSQL implement them all, in
// server/sqldb, one file per entity.

// TeamStore keeps teams.
type TeamStore interface {
	CreateTeam(ctx context.Context, t *Team) error
	FindTeam(ctx context.Context, id int64) (*Team, error)
}

// ExtensionStore keeps extensions.
type ExtensionStore interface {
	CreateExtension(ctx context.Context, e *Extension) error
	FindExtension(ctx context.Context, id int64) (*Extension, error)
	FindExtensions(ctx context.Context, f ExtensionFilter) ([]*Extension, error)
}

// KeyStore keeps extensions' named submit keys, as hashes of their secrets.
type KeyStore interface {
	// CreateKey adds k, whose secret hashes to keyHash, and records it in
	// the audit trail (by k.CreatedBy).
	CreateKey(ctx context.Context, k *Key, keyHash string) error
	// FindKeys returns up to limit of an extension's keys, revoked ones
	// too, newest first, keyset-paged by id (beforeID 0: from the newest).
	FindKeys(ctx context.Context, extensionID, beforeID int64, limit int) ([]*Key, error)
	// FindKeyByHash returns the key whose secret hashes to hash, unless it
	// is revoked (ENOTFOUND).
	FindKeyByHash(ctx context.Context, hash string) (*Key, error)
	// RevokeKey revokes one key of an extension and records actor in the
	// audit trail; revoking a revoked key changes nothing.
	RevokeKey(ctx context.Context, extensionID, keyID int64, actor string) (*Key, error)
	// FindKey returns one of an extension's keys, revoked or not.
	FindKey(ctx context.Context, extensionID, keyID int64) (*Key, error)
	// KeyUsed records that a key authorised a call at at.
	KeyUsed(ctx context.Context, keyID int64, at time.Time) error
}

// AuditStore reads the audit trail the other stores write.
type AuditStore interface {
	// FindAuditEvents returns up to limit of an extension's audit events,
	// newest first, keyset-paged by id (beforeID 0: from the newest).
	FindAuditEvents(ctx context.Context, extensionID, beforeID int64, limit int) ([]*AuditEvent, error)
}

// BundleStore keeps published bundles.
type BundleStore interface {
	// PublishBundle numbers b as the extension's next bundle (numbers are
	// never reused) and makes it the current one, atomically. When b.Number
	// is set, it is the number the caller built b for (its served version
	// and CRX depend on it): if another bundle took it meanwhile, nothing is
	// published and the error is ECONFLICT. PublishUpload does the same.
	PublishBundle(ctx context.Context, b *Bundle) error
	// PublishRollback publishes b, a rollback of bundle b.RollbackOf built
	// for number b.Number, as PublishBundle does, with an audit event by
	// actor — unless the current bundle already is a rollback of that
	// bundle: then nothing is published and that bundle is returned with
	// false, so racing rollbacks publish one. When b.RollbackOf is current
	// itself the error is ECONFLICT.
	PublishRollback(ctx context.Context, b *Bundle, actor string) (*Bundle, bool, error)
	FindBundle(ctx context.Context, extensionID, number int64) (*Bundle, error)
	// FindChannelBundleByVersion returns the newest bundle of version ever
	// put on channel.
	FindChannelBundleByVersion(ctx context.Context, extensionID int64, channel, version string) (*Bundle, error)
	// FindBundles returns up to limit bundles numbered at most maxNumber,
	// newest first: a range over the number, so a deep page costs what the
	// first one costs.
	FindBundles(ctx context.Context, extensionID, maxNumber int64, limit int) ([]*Bundle, error)
	// FindBundlePage returns page (from 0) of the extension's bundles,
	// limit to a page, newest first: the bundles numbered at most
	// last - page*limit. The page is read in one snapshot: which bundles
	// it holds and which of them is current come from the same state, so
	// a publish while it is read shows in all of it or in none of it.
	FindBundlePage(ctx context.Context, extensionID, page int64, limit int) ([]*Bundle, error)
	// FindBuilds returns bundles of the given extensions, newest first,
	// keyset-paged by bundle id (beforeID 0: from the newest): those ever
	// put on channel, or all of them when channel is "".
	FindBuilds(ctx context.Context, extensionIDs []int64, channel string, beforeID int64, limit int) ([]*Bundle, error)
	// LastBundleNumber is the highest number given out (0 before any).
	LastBundleNumber(ctx context.Context, extensionID int64) (int64, error)
	// BundleRevision reads the current and the highest bundle numbers in
	// one snapshot: a publish changes both at once, and two reads could
	// see one change and not the other.
	BundleRevision(ctx context.Context, extensionID int64) (current, last int64, err error)
	// Revision reads the bundle numbers and the testers revision in one
	// snapshot.
	Revision(ctx context.Context, extensionID int64) (Revision, error)
	// BundleVersions lists the distinct versions the extension's bundles
	// were served with.
	BundleVersions(ctx context.Context, extensionID int64) ([]string, error)
	// SetBundleCRX records a bundle's (re)built CRX package.
	SetBundleCRX(ctx context.Context, bundleID int64, c CRX) error
}

// SigningStore keeps what signs extensions' CRX packages.
type SigningStore interface {
	// CreateSigning keeps s as the extension's signing key and update token
	// and chromeID as its Chrome ID, unless it has them already. Either way
	// it returns what is kept, so racing callers agree on one key.
	CreateSigning(ctx context.Context, s *Signing, chromeID string) (*Signing, error)
	// FindSigning returns an extension's signing key and update token
	// (ENOTFOUND before CreateSigning).
	FindSigning(ctx context.Context, extensionID int64) (*Signing, error)
	// RotateUpdateToken replaces an extension's update token.
	RotateUpdateToken(ctx context.Context, extensionID int64, token string) error
	// SigningKeys lists every extension's stored (sealed) private key,
	// by extension ID.
	SigningKeys(ctx context.Context) (map[int64][]byte, error)
	// ReplaceSigningKey stores next as an extension's private key if the
	// stored one is still prev (ECONFLICT otherwise): a rewrap never
	// overwrites a key that changed meanwhile.
	ReplaceSigningKey(ctx context.Context, extensionID int64, prev, next []byte) error
}

// UploadStore keeps the zips submitted through the submit flow.
type UploadStore interface {
	// CreateUpload records a newly issued upload URL; earlier uploads of the
	// extension that were not published become superseded.
	CreateUpload(ctx context.Context, u *Upload) error
	FindUpload(ctx context.Context, id int64) (*Upload, error)
	// LatestUpload is the extension's last issued upload.
	LatestUpload(ctx context.Context, extensionID int64) (*Upload, error)
	// ReceiveUpload records a stored zip for an upload still open for one.
	ReceiveUpload(ctx context.Context, id, size int64, sha256 string) error
	RejectUpload(ctx context.Context, id int64, problems []ZipProblem) error
	// PublishUpload publishes a received upload as bundle b, exactly once:
	// the upload's state, the bundle's number and the extension's current
	// bundle change in one transaction. When the upload was published
	// already, it returns that bundle and false.
	PublishUpload(ctx context.Context, uploadID int64, b *Bundle) (*Bundle, bool, error)
	// ExpireUploads marks uploads whose URL expired before their zip came.
	ExpireUploads(ctx context.Context, now time.Time) error
	// SweepableUploads lists dead uploads whose bytes are still stored.
	SweepableUploads(ctx context.Context, limit int) ([]*Upload, error)
	MarkUploadSwept(ctx context.Context, id int64) error
	// LiveBlobs lists what the records point to: every bundle's zip and
	// CRX key, and the uploads still waiting for their zip or sign. The
	// sweeper deletes any other blob once it is old enough.
	LiveBlobs(ctx context.Context) (*LiveBlobs, error)
}

// TesterStore keeps the people invited to test extensions.
type TesterStore interface {
	// CreateTesters inserts testers in one transaction (seeding, bulk
	// loads).
	CreateTesters(ctx context.Context, ts []*Tester) error
	// InviteTester adds one tester who signs in with link (once, before it
	// expires), and records actor in the audit trail.
	InviteTester(ctx context.Context, t *Tester, link InviteLink, actor string) error
	FindTester(ctx context.Context, id int64) (*Tester, error)
	FindTesterByInvite(ctx context.Context, inviteHash string) (*Tester, error)
	// FindTesterByEmail returns an extension's tester with the e-mail (in
	// any case).
	FindTesterByEmail(ctx context.Context, extensionID int64, email string) (*Tester, error)
	FindTesters(ctx context.Context, f TesterFilter) ([]*Tester, error)
	// UseInvite signs a tester in with the link whose token hashes to
	// inviteHash at now: it marks the link used (it works for no other
	// browser), the tester active and seen, and returns the tester. A link
	// used already, even by a racing request, is an ECONFLICT with
	// ReasonInviteUsed; one expired at now ReasonInviteExpired; a revoked
	// tester's an EFORBIDDEN; an unknown one ENOTFOUND.
	UseInvite(ctx context.Context, inviteHash string, now time.Time) (*Tester, error)
	// RevokeTester revokes a tester and records actor as who did. Their
	// sessions are kept (so their browser can be told access ended), and
	// every request refuses them by the tester's status.
	RevokeTester(ctx context.Context, id int64, actor string) error
	// RestoreTester makes a revoked tester invited again, the same record
	// with a new link; the sessions of before the revoke are deleted.
	RestoreTester(ctx context.Context, id int64, link InviteLink, actor string) (*Tester, error)
	// ResendInvite gives a tester who is not revoked a new link; the old
	// link stops working, and so does their
	// update token (the copy installed from it no longer updates; the
	// next CRX they get carries a new one).
	ResendInvite(ctx context.Context, id int64, link InviteLink, actor string) (*Tester, error)
	// TesterUpdateToken returns a tester's update token, sealed ("" before
	// one was made).
	TesterUpdateToken(ctx context.Context, testerID int64) (sealed string, err error)
	// SetTesterUpdateToken gives a tester without an update token this one
	// (its hash, to find them by, and its sealed copy) and returns the
	// sealed token the tester has: the one given first, when racing
	// requests give them one each.
	SetTesterUpdateToken(ctx context.Context, testerID int64, hash, sealed string) (string, error)
	// SealedTesterTokens returns every tester's sealed update token, by
	// tester id (a keyring rotation seals them again).
	SealedTesterTokens(ctx context.Context) (map[int64]string, error)
	// ReplaceTesterToken replaces a tester's sealed update token if it is
	// still old (the same token, sealed again).
	ReplaceTesterToken(ctx context.Context, testerID int64, old, sealed string) error
	// FindTesterByUpdateToken returns the extension's tester whose update
	// token hashes to hash.
	FindTesterByUpdateToken(ctx context.Context, extensionID int64, hash string) (*Tester, error)
	// CountInstalls counts an extension's testers who are not revoked by
	// what their copies last reported: on the current build (version
	// current), on another, silent since silentSince, never checked.
	CountInstalls(ctx context.Context, extensionID int64, current string, silentSince time.Time) (Installs, error)
	// RecordTesterChecks keeps each tester's last update check (the
	// version their copy reported, and when), in one transaction. A check
	// older than the one kept changes nothing.
	// It also keeps, per tester and UTC day, the version reported at the
	// day's last check (adoption by testers), and moves the testers
	// revision of every extension a check is of.
	RecordTesterChecks(ctx context.Context, checks []TesterCheck) error
}

// AdoptionStore keeps hourly counts of update checks by reported version.
type AdoptionStore interface {
	// AddAdoption adds counts to the stored ones, in one transaction: a row
	// per (extension, hour, version), made or added to. Replicas add to
	// the same rows at once.
	AddAdoption(ctx context.Context, counts []AdoptionCount) error
	// FindAdoption returns up to f.Limit counts, newest hour first, then
	// by version, keyset-paged by f.After.
	FindAdoption(ctx context.Context, f AdoptionFilter) ([]*AdoptionCount, error)
}

// ChannelStore keeps extensions' channels, the bundles on each, and their
// staged rollouts. Every change is made under the extension's lock, with
// its audit event and webhook events in the same transaction.
type ChannelStore interface {
	// CreateChannel adds a channel (ECONFLICT if the extension has one by
	// that name; EINVALID past MaxChannels).
	CreateChannel(ctx context.Context, extensionID int64, name, actor string) (*Channel, error)
	// FindChannels lists an extension's channels by name, each with its
	// rollout in progress.
	FindChannels(ctx context.Context, extensionID int64) ([]*Channel, error)
	// FindChannel returns one channel; ENOTFOUND names the channels there
	// are.
	FindChannel(ctx context.Context, extensionID int64, name string) (*Channel, error)
	// PromoteBundle puts a published bundle on a channel (the same bytes
	// and version): at 100 % it becomes the channel's current bundle,
	// below a rollout of it starts. A bundle no newer than what the
	// channel serves is refused (ECONFLICT, ReasonNotNewer).
	PromoteBundle(ctx context.Context, extensionID, number int64, p Placement) (*Channel, error)
	// ChangeRollout advances (to percent), halts, resumes or completes the
	// channel's rollout in progress. Advancing to 100 % completes it.
	// Halting a halted rollout, resuming an active one and advancing to the
	// percentage it has change nothing, so a retry is answered alike.
	ChangeRollout(ctx context.Context, extensionID int64, channel, action string, percent int, actor string) (*Channel, error)
	// SetTesterChannel moves a tester to another channel of their
	// extension.
	SetTesterChannel(ctx context.Context, testerID int64, channel, actor string) (*Tester, error)
	// ChannelTesters maps the channel's testers who are not revoked to the
	// version their installed copy last reported ("" before one did).
	ChannelTesters(ctx context.Context, extensionID int64, channel string) (map[int64]string, error)
	// OnChannel reports whether bundle number was ever put on the channel.
	OnChannel(ctx context.Context, extensionID int64, channel string, number int64) (bool, error)
	// BundleChannels lists the channels each of the bundles was put on.
	BundleChannels(ctx context.Context, extensionID int64, numbers []int64) (map[int64][]string, error)
}

// UserStore keeps admins.
type UserStore interface {
	// CreateUser adds an admin with an already hashed password.
	CreateUser(ctx context.Context, u *User, passwordHash string) error
	FindUser(ctx context.Context, id int64) (*User, error)
	// FindUserByEmail returns the user and their password hash.
	FindUserByEmail(ctx context.Context, email string) (*User, string, error)
}

// SessionStore keeps signed-in browsers.
type SessionStore interface {
	CreateSession(ctx context.Context, s *Session) error
	// FindSession returns the unexpired session whose token hashes to hash.
	FindSession(ctx context.Context, hash string) (*Session, error)
	// ExtendSession moves a session's expiry (sliding expiry).
	ExtendSession(ctx context.Context, hash string, expires time.Time) error
	DeleteSession(ctx context.Context, hash string) error
}

// Store is every store at once, as a database implements them, with what
// concerns the database as a whole.
type Store interface {
	TeamStore
	ExtensionStore
	KeyStore
	AuditStore
	BundleStore
	SigningStore
	UploadStore
	TesterStore
	UserStore
	SessionStore
	AdoptionStore
	WebhookStore
	ChannelStore
	FeedbackStore
	TokenStore

	// Ping checks that the store can answer queries (readiness).
	Ping(ctx context.Context) error
	Close() error
	// Empty reports whether the store holds no teams yet (seeding guard).
	Empty(ctx context.Context) (bool, error)
	// Optimize tidies the indexes after a bulk load, so that searches are
	// as quick right after it as they will be.
	Optimize(ctx context.Context) error
}

// Now is the clock the domain uses; stores truncate to milliseconds so a
// value read back equals the value written.
func Now() time.Time { return time.Now().UTC().Truncate(time.Millisecond) }

// BundleKey is where a published zip is kept: addressed by its content, so
// a stored bundle is never overwritten with other bytes.
func BundleKey(extensionID int64, sha256hex string) string {
	return fmt.Sprintf("bundles/%d/%s.zip", extensionID, sha256hex)
}

// CRXKey is where a bundle's CRX package is kept, addressed by its content.
func CRXKey(extensionID int64, sha256hex string) string {
	return fmt.Sprintf("bundles/%d/%s.crx", extensionID, sha256hex)
}

// LiveBlobs is what the sweeper keeps.
type LiveBlobs struct {
	Keys           map[string]bool // bundle zips and CRXs, feedback screenshots
	PendingUploads map[int64]bool  // uploads requested or received
}
