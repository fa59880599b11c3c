package betaport

import (
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Plans a team can be on. Only Professional teams may submit bundles.
const (
	PlanProfessional = "professional"
	PlanStarter      = "starter"
)

// ValidPlan reports whether p names a known plan.
func ValidPlan(p string) bool {
	return p == PlanProfessional || p == PlanStarter
}

// Team is a customer account; its admins manage all of its extensions.
type Team struct {
	ID        int64     `json:"id"`
	Name      string    `json:"name"`
	Plan      string    `json:"plan"`
	Seats     int       `json:"seats"`
	CreatedAt time.Time `json:"createdAt"`
}

// Validate reports what is wrong with a team about to be saved.
func (t *Team) Validate() error {
	switch {
	case strings.TrimSpace(t.Name) == "":
		return &Error{Code: EINVALID, Message: "A team needs a name.", Param: "name"}
	case !ValidPlan(t.Plan):
		return &Error{Code: EINVALID, Message: "The plan must be professional or starter.", Param: "plan"}
	case t.Seats < 1:
		return &Error{Code: EINVALID, Message: "A team has at least one seat.", Param: "seats"}
	}
	return nil
}

// Extension is one browser extension whose bundles Betaport builds and serves.
type Extension struct {
	ID        int64     `json:"id"`
	TeamID    int64     `json:"teamId"`
	Name      string    `json:"name"`
	CreatedAt time.Time `json:"createdAt"`
	// CurrentBundle is the number of the bundle testers get; 0 before the
	// first publish.
	CurrentBundle int64 `json:"currentBundle,omitempty"`
	// ChromeID is the ID Chromium gives the extension's CRX packages
	// (32 letters a–p, from the public half of its signing key); empty
	// until the key is made, at the first sign or settings visit.
	ChromeID string `json:"chromeId,omitempty"`
}

// Validate reports what is wrong with an extension about to be saved.
func (e *Extension) Validate() error {
	if strings.TrimSpace(e.Name) == "" {
		return &Error{Code: EINVALID, Message: "An extension needs a name.", Param: "name"}
	}
	return nil
}

// Bundle is one published, immutable build of an extension, and where its
// bytes are kept (never sent: those fields are the server's).
type Bundle struct {
	ID          int64 `json:"id"`
	ExtensionID int64 `json:"extensionId"`
	Number      int64 `json:"number"`
	// Name is the name the bundle's manifest.json gives (what browsers
	// show once it is installed).
	Name string `json:"name"`
	// ExtensionName is the extension's name as its admins named it, given
	// in a tester's builds (which show it, the same on every build,
	// whatever each manifest said); empty elsewhere.
	ExtensionName string `json:"extensionName,omitempty"`
	// Version is the manifest version browsers are served: always higher
	// than every earlier bundle's, so installed copies update.
	Version string `json:"version"`
	// VersionName is the version the upload's manifest gave, when Version
	// had to be derived from it. It is then the CRX's version_name, unless
	// the manifest gave a version_name of its own, which is kept.
	VersionName string `json:"versionName,omitempty"`
	// MinChromeVersion is the manifest's minimum_chrome_version: an older
	// browser is not offered the bundle as an update.
	MinChromeVersion string    `json:"minChromeVersion,omitempty"`
	ManifestVersion  int       `json:"manifestVersion"`
	Size             int64     `json:"size"`
	SHA256           string    `json:"sha256"`
	FileCount        int       `json:"fileCount"`
	Source           string    `json:"source"`
	CreatedAt        time.Time `json:"createdAt"`
	Current          bool      `json:"current,omitempty"`
	// ReleaseNotes are what the submission said about the build: plain
	// text with a small Markdown subset (see app/notes), at most
	// MaxReleaseNotes bytes.
	ReleaseNotes string `json:"releaseNotes,omitempty"`
	// RollbackOf is the number of the older bundle this one serves again,
	// under a higher version; 0 for a bundle built from an upload.
	RollbackOf int64 `json:"rollbackOf,omitempty"`

	// Channels are the channels the bundle was put on (published, promoted
	// or rolled back to), filled in by the API for admins.
	Channels []string `json:"channels,omitempty"`
	// OpenFeedback counts the testers' reports on the bundle not resolved
	// yet, filled in by the API for admins.
	OpenFeedback int64 `json:"openFeedback,omitempty"`
	// Placement is where a bundle about to be published goes: its channel
	// and the share of the channel's testers (the default channel, all of
	// them, when zero). Never sent.
	Placement Placement `json:"-"`

	// BlobKey is the key of the immutable zip in blob storage.
	BlobKey string `json:"-"`
	// CRX is the bundle's signed package, once built.
	CRX CRX `json:"-"`
}

// Validate reports what is wrong with a bundle about to be published.
func (b *Bundle) Validate() error {
	switch {
	case b.BlobKey == "" || b.SHA256 == "":
		return Errorf(EINVALID, "A bundle needs its stored zip.")
	case b.ExtensionID <= 0:
		return Errorf(EINVALID, "A bundle belongs to an extension.")
	case b.Size < 0 || b.FileCount < 0 || b.Number < 0:
		return Errorf(EINVALID, "A bundle's size, file count and number cannot be negative.")
	}
	return nil
}

// Tester statuses.
const (
	TesterInvited = "invited"
	TesterActive  = "active"
	TesterRevoked = "revoked"
)

// Tester is a person invited to test one extension.
type Tester struct {
	ID          int64      `json:"id"`
	ExtensionID int64      `json:"extensionId"`
	Email       string     `json:"email"`
	Name        string     `json:"name"`
	Status      string     `json:"status"`
	CreatedAt   time.Time  `json:"createdAt"`
	LastSeenAt  *time.Time `json:"lastSeenAt,omitempty"`
	// InvitedAt is when the tester's current invite was made: their link,
	// or, for testers loaded in bulk as invited, when they were added (nil
	// for the others loaded in bulk).
	InvitedAt *time.Time `json:"invitedAt,omitempty"`
	// InviteExpiresAt is when the tester's current link stops working if
	// unused; InviteUsedAt when it signed a browser in (after which it
	// works for no other). Both nil for testers loaded in bulk.
	InviteExpiresAt *time.Time `json:"inviteExpiresAt,omitempty"`
	InviteUsedAt    *time.Time `json:"inviteUsedAt,omitempty"`
	// RevokedBy is who revoked the tester (an admin's e-mail, or
	// ActorCommandLine); empty unless revoked.
	RevokedBy string `json:"revokedBy,omitempty"`
	// InstalledVersion is the version the tester's installed copy
	// reported at its last update check, LastCheckAt when that was; ""
	// and nil before their copy first checked with their own update URL.
	InstalledVersion string     `json:"installedVersion,omitempty"`
	LastCheckAt      *time.Time `json:"lastCheckAt,omitempty"`
	// Channel is the channel whose bundles the tester gets.
	Channel string `json:"channel"`
	// UpdateTokenHash is the hash of the tester's update token ("" before
	// one is made): it names their packed copies. Never sent.
	UpdateTokenHash string `json:"-"`
}

// Installs counts an extension's testers (not revoked) by what their
// installed copies last reported.
type Installs struct {
	Testers int64 `json:"testers"`
	// OnCurrent checked in on the current build, Behind on another;
	// NotInstalled never checked in. Silent (some of OnCurrent and Behind)
	// checked in, but not for SilentDays.
	OnCurrent    int64 `json:"onCurrent"`
	Behind       int64 `json:"behind"`
	Silent       int64 `json:"silent"`
	NotInstalled int64 `json:"notInstalled"`
	// Revision is a testers revision the counts are at least as new as.
	Revision int64 `json:"revision"`
}

// TesterCheck is one update check of a tester's installed copy.
type TesterCheck struct {
	ExtensionID, TesterID int64
	Version               string
	At                    time.Time
}

// Revision says what an extension's bundles and testers are at: enough for
// a list to know whether it is out of date, and for a header to show what
// testers get. The event stream sends it.
type Revision struct {
	// CurrentBundle is the number of the bundle testers get.
	CurrentBundle int64 `json:"currentBundle"`
	// LastBundle is the highest bundle number: the top of the bundles list.
	LastBundle int64 `json:"lastBundle"`
	// Testers grows whenever what the testers list shows changes: an
	// invite, a link opened, a revoke, a restore, a new link, an installed
	// copy's checks written. A "bundles" event does not carry it.
	Testers int64 `json:"testers"`
	// Channels grows with every change to the extension's channels and
	// rollouts, and to which channel a tester is on.
	Channels int64 `json:"channels"`
	// Feedback grows with every report made, moved or deleted.
	Feedback int64 `json:"feedback"`
}

// DefaultInviteExpiry is how long an invite link works unless the admin
// says otherwise: long enough for a tester back from a holiday, short
// enough that a forwarded or leaked link does not stay a way in.
const DefaultInviteExpiry = 14 * 24 * time.Hour

// MaxInviteExpiry is the longest an admin may make a link work.
const MaxInviteExpiry = 90 * 24 * time.Hour

// InviteLink is a tester's personal sign-in link as the store keeps it:
// the hash of its token and when it stops working unused.
type InviteLink struct {
	Hash      string
	ExpiresAt time.Time
}

// InviteLinkState is what a tester's current link can still do at now.
func (t *Tester) InviteLinkState(now time.Time) string {
	switch {
	case t.InviteUsedAt != nil:
		return InviteUsed
	case t.InviteExpiresAt != nil && !now.Before(*t.InviteExpiresAt):
		return InviteExpired
	}
	return InviteOpen
}

// States of an invite link.
const (
	InviteOpen    = "open"
	InviteUsed    = "used"
	InviteExpired = "expired"
)

// Normalize trims a tester's e-mail (lower-cased) and name, and makes a
// new tester invited.
func (t *Tester) Normalize() {
	t.Email = strings.ToLower(strings.TrimSpace(t.Email))
	t.Name = strings.TrimSpace(t.Name)
	if t.Status == "" {
		t.Status = TesterInvited
	}
}

// Validate reports what is wrong with a tester about to be saved.
func (t *Tester) Validate() error {
	if !validEmail(t.Email) {
		return &Error{Code: EINVALID, Param: "email", Message: "Give the tester's e-mail address, like ada@example.com."}
	}
	if strings.ContainsFunc(t.Name, unicode.IsControl) || !utf8.ValidString(t.Name) || !utf8.ValidString(t.Email) {
		return &Error{Code: EINVALID, Param: "name", Message: "A tester's name is one line of text, without control characters."}
	}
	if len(t.Email) > 254 || len(t.Name) > 200 {
		return &Error{Code: EINVALID, Param: "email", Message: "That e-mail address or name is too long."}
	}
	switch t.Status {
	case TesterInvited, TesterActive, TesterRevoked:
		return nil
	}
	return &Error{Code: EINVALID, Param: "status", Message: "A tester is invited, active or revoked."}
}

// User is an admin: a person who manages every extension of one team.
type User struct {
	ID        int64     `json:"id"`
	TeamID    int64     `json:"teamId"`
	Email     string    `json:"email"`
	CreatedAt time.Time `json:"createdAt"`
}

// Validate reports what is wrong with an admin about to be saved.
func (u *User) Validate() error {
	if !validEmail(u.Email) || len(u.Email) > 254 {
		return &Error{Code: EINVALID, Param: "email", Message: "Give the admin's e-mail address, like ada@example.com."}
	}
	return nil
}

// validEmail is the shape of an address worth sending an invite to: a local
// part, an @ and a domain, nothing that breaks a header.
func validEmail(s string) bool {
	at := strings.IndexByte(s, '@')
	return at >= 1 && at < len(s)-1 && !strings.ContainsAny(s, " <>") && !strings.ContainsFunc(s, unicode.IsControl)
}

// ZipProblem is one thing wrong with a submitted zip.
type ZipProblem struct {
	Code    string `json:"code"`
	Path    string `json:"path"`
	Message string `json:"message"`
}

// ZipProblemVersionExhausted is the code of the sign refused because the
// extension already served 65535.65535.65535.65535, the highest version.
// The other codes are package zipcheck's.
const ZipProblemVersionExhausted = "version_exhausted"

// Key is one of an extension's named submit keys. Its secret is shown once,
// when it is made, and kept only as a hash; each key is revoked on its own.
type Key struct {
	ID          int64      `json:"id"`
	ExtensionID int64      `json:"extensionId"`
	Label       string     `json:"label"`
	CreatedAt   time.Time  `json:"createdAt"`
	CreatedBy   string     `json:"createdBy"`
	LastUsedAt  *time.Time `json:"lastUsedAt,omitempty"`
	RevokedAt   *time.Time `json:"revokedAt,omitempty"`
	// Channel, when set, is the only channel the key publishes to.
	Channel string `json:"channel,omitempty"`
}

// MaxKeyLabel is the longest label a key takes, in characters.
const MaxKeyLabel = 100

// Validate reports what is wrong with a key about to be saved.
func (k *Key) Validate() error {
	switch label := strings.TrimSpace(k.Label); {
	case label == "":
		return &Error{Code: EINVALID, Param: "label", Message: `Name the key after where it is used, like "GitHub Actions".`}
	case utf8.RuneCountInString(label) > MaxKeyLabel:
		return &Error{Code: EINVALID, Param: "label", Message: fmt.Sprintf("A key's label is at most %d characters.", MaxKeyLabel)}
	case strings.ContainsFunc(label, unicode.IsControl) || !utf8.ValidString(label):
		return &Error{Code: EINVALID, Param: "label", Message: "A key's label is one line of text, without control characters."}
	case strings.TrimSpace(k.CreatedBy) == "":
		return &Error{Code: EINVALID, Param: "createdBy", Message: "A key records who made it."}
	case k.Channel != "":
		return ValidateChannelName(k.Channel)
	}
	return nil
}

// Audit actions: what the audit trail records.
const (
	AuditKeyCreated     = "key.created"
	AuditKeyRevoked     = "key.revoked"
	AuditTesterInvited  = "tester.invited"
	AuditInviteResent   = "tester.invite_resent"
	AuditTesterRevoked  = "tester.revoked"
	AuditTesterRestored = "tester.restored"
	AuditBundleRollback = "bundle.rollback"
	AuditChannelCreated = "channel.created"
	AuditTesterChannel  = "tester.channel_changed"
	AuditBundlePromoted = "bundle.promoted"
	// The rollout actions are the webhook event types of the same names.
	AuditRolloutStarted   = "rollout.started"
	AuditRolloutAdvanced  = "rollout.advanced"
	AuditRolloutHalted    = "rollout.halted"
	AuditRolloutResumed   = "rollout.resumed"
	AuditRolloutCompleted = "rollout.completed"
)

// ActorCommandLine is the actor of changes made with the betaport command,
// which runs with the database's own rights and signs nobody in.
const ActorCommandLine = "command line"

// AuditEvent is one change to an extension's keys or testers: who made it,
// what it was and when. Stores write one in the same transaction as the
// change it records.
type AuditEvent struct {
	ID          int64     `json:"id"`
	ExtensionID int64     `json:"extensionId"`
	Actor       string    `json:"actor"`   // an admin's e-mail, or ActorCommandLine
	Action      string    `json:"action"`  // one of the Audit… actions
	Subject     string    `json:"subject"` // the key's label or the tester's e-mail
	CreatedAt   time.Time `json:"createdAt"`
}

// MaxReleaseNotes is the most release notes a submission may carry, in
// bytes of UTF-8.
const MaxReleaseNotes = 10 << 10

// ValidateReleaseNotes reports what is wrong with release notes: too long,
// not UTF-8, or holding control characters other than newlines and tabs.
func ValidateReleaseNotes(notes string) error {
	switch {
	case len(notes) > MaxReleaseNotes:
		return Errorf(EINVALID, "Release notes are %d bytes; at most %d (10 KiB) are kept. Shorten them, or link to a longer changelog.", len(notes), MaxReleaseNotes)
	case !utf8.ValidString(notes):
		return Errorf(EINVALID, "Release notes must be UTF-8 text.")
	}
	for _, r := range notes {
		if unicode.IsControl(r) && r != '\n' && r != '\t' && r != '\r' {
			return Errorf(EINVALID, "Release notes must be plain text: they hold a control character (U+%04X).", r)
		}
	}
	return nil
}
