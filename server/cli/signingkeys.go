package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/betaport/betaport/app/betaport"
	"github.com/betaport/betaport/server/keyring"
	"github.com/betaport/betaport/server/publish"
	"github.com/betaport/betaport/server/webhook"
)

// keyringFile is where a single machine keeps its signing keyring, beside
// (not inside) the database it protects. Back it up apart from database
// dumps: without it no extension can be signed again.
const keyringFile = "signing-keyring"

// signingKeyring returns the keyring that seals extensions' CRX signing
// keys: --signing-keyring when given; required with a shared (PostgreSQL)
// store, where every replica must hold the same keys; else the data dir's
// keyring file, made on first start.
//
// A keyring is only ever made when no stored key is sealed: making a new
// one over sealed keys would leave them unopenable, so that is refused
// with what to do instead.
func (c *Config) signingKeyring(ctx context.Context, store betaport.Store) (*keyring.Keyring, error) {
	if c.SigningKeyring != "" {
		k, err := keyring.Parse(c.SigningKeyring)
		if err != nil {
			return nil, fmt.Errorf("--signing-keyring: %w", err)
		}
		return k, nil
	}
	if c.sharedDB() {
		return nil, errors.New("--signing-keyring (or BETAPORT_SIGNING_KEYRING) is required with a postgres:// store: every replica must seal and open extensions' signing keys with the same keyring. " +
			"Make one with `betaport signing-key generate` and give it to every replica")
	}
	path := filepath.Join(c.Data, keyringFile)
	text, err := os.ReadFile(path)
	if err == nil {
		k, err := keyring.Parse(string(text))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return k, nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	if ids := sealedWith(ctx, store); len(ids) > 0 {
		return nil, fmt.Errorf("the signing keyring %s is missing, but the database holds signing keys (or update tokens, or webhook secrets) sealed with %s. "+
			"Restore the keyring file from your backup (or pass it with --signing-keyring); a new keyring would give every extension a new identity, and installed copies would never update again",
			path, strings.Join(ids, ", "))
	}
	if err := os.MkdirAll(c.Data, 0o700); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, os.ErrExist) {
		return c.signingKeyring(ctx, store) // another process made it first
	} else if err != nil {
		return nil, err
	}
	defer f.Close()
	entry := keyring.Generate()
	if _, err := fmt.Fprintf(f, "# Betaport's signing keyring: it seals extensions' CRX signing keys and testers' update tokens and webhook secrets in the database.\n# Back it up apart from the database. Newest key last; see `betaport signing-key -h`.\n%s\n", entry); err != nil {
		return nil, err
	}
	return keyring.Parse(entry)
}

// sealedWith lists the key ids stored values are sealed with: signing
// keys, testers' update tokens and webhook secrets (a database may hold
// sealed tokens or webhook secrets before any signing key).
func sealedWith(ctx context.Context, store betaport.Store) []string {
	var values [][]byte
	keys, err := store.SigningKeys(ctx)
	if err != nil {
		return []string{"(unknown: " + err.Error() + ")"}
	}
	for _, v := range keys {
		values = append(values, v)
	}
	for _, list := range []func(context.Context) (map[int64]string, error){store.SealedTesterTokens, store.WebhookSecrets} {
		sealed, err := list(ctx)
		if err != nil {
			return []string{"(unknown: " + err.Error() + ")"}
		}
		for _, v := range sealed {
			values = append(values, []byte(v))
		}
	}
	var ids []string
	for _, v := range values {
		if id, ok := keyring.KeyID(v); ok && !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}

// prepareSigningKeys checks, before serve answers anything, that the
// keyring opens every stored signing key, and seals keys stored in plain
// text (from before sealing). It refuses to go on rather than let a sign
// mint a new identity for an extension whose key it cannot open.
func prepareSigningKeys(ctx context.Context, store betaport.Store, k *keyring.Keyring) (sealed int, err error) {
	keys, err := store.SigningKeys(ctx)
	if err != nil {
		return 0, err
	}
	failures := map[string][]int64{}
	for id, v := range keys {
		if !keyring.IsSealed(v) {
			if err := store.ReplaceSigningKey(ctx, id, v, k.Seal(v, publish.SigningContext(id))); err != nil {
				return sealed, err
			}
			sealed++
			continue
		}
		if _, err := k.Open(v, publish.SigningContext(id)); err != nil {
			kid, _ := keyring.KeyID(v)
			why := "key " + kid + " is not in the keyring"
			if errors.Is(err, keyring.ErrWrongKey) {
				why = "key " + kid + " in the keyring does not open them (was it changed?)"
			}
			failures[why] = append(failures[why], id)
		}
	}
	if len(failures) > 0 {
		var parts []string
		for why, ids := range failures {
			slices.Sort(ids)
			parts = append(parts, fmt.Sprintf("%s: extensions %v", why, ids))
		}
		slices.Sort(parts)
		return sealed, fmt.Errorf("the signing keyring cannot open stored signing keys (%s). "+
			"Give serve the keyring they were sealed with (--signing-keyring, or the data dir's %s file from your backup); "+
			"serving without them would give those extensions new identities, and installed copies would never update again",
			strings.Join(parts, "; "), keyringFile)
	}
	return sealed, nil
}

// prepareWebhookSecrets seals, before serve answers anything, the webhook
// secrets stored in plain text (from before sealing), and returns how many
// it sealed and the webhooks whose secrets the keyring cannot open. Those
// do not stop serve, unlike signing keys: their events are not sent (the
// deliveries list says why) until serve has the key, or an admin adds the
// webhook again.
func prepareWebhookSecrets(ctx context.Context, store betaport.Store, k *keyring.Keyring) (webhook.Resealed, error) {
	return webhook.ResealSecrets(ctx, store, k, false)
}

// signingKey is `betaport signing-key generate|rewrap`. It is apart from
// `betaport key`, which makes the API keys pipelines submit with.
func signingKey(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || (args[0] != "generate" && args[0] != "rewrap") {
		return usageError{"use `betaport signing-key generate` (print a new keyring entry) or `betaport signing-key rewrap` (move every stored key to the keyring's newest key)"}
	}
	c := DefaultConfig()
	fs := flag.NewFlagSet("signing-key "+args[0], flag.ContinueOnError)
	if args[0] == "generate" {
		if err := parse(fs, args[1:], stderr); err != nil {
			return err
		}
		fmt.Fprintln(stdout, keyring.Generate())
		fmt.Fprintln(stderr, "Append this line to the keyring (newest last), give the keyring to every replica and restart them, then run `betaport signing-key rewrap`; drop an old key only after that.")
		return nil
	}
	c.storageFlags(fs)
	if err := parse(fs, args[1:], stderr); err != nil {
		return err
	}
	return withExistingStorage(ctx, c, func(st *Storage) error {
		k, err := c.signingKeyring(ctx, st.Store)
		if err != nil {
			return err
		}
		keys, err := st.Store.SigningKeys(ctx)
		if err != nil {
			return err
		}
		moved := 0
		for id, v := range keys {
			if kid, ok := keyring.KeyID(v); ok && kid == k.Newest() {
				continue
			}
			pem := v
			if keyring.IsSealed(v) {
				if pem, err = k.Open(v, publish.SigningContext(id)); err != nil {
					return fmt.Errorf("extension %d: %w; nothing after it was rewrapped, and every key stays readable", id, err)
				}
			}
			if err := st.Store.ReplaceSigningKey(ctx, id, v, k.Seal(pem, publish.SigningContext(id))); err != nil {
				return err
			}
			moved++
		}
		// Testers' update tokens are sealed with the same keyring (their
		// copies are packed with them): an old key drops only once
		// neither is sealed with it.
		tokens, err := st.Store.SealedTesterTokens(ctx)
		if err != nil {
			return err
		}
		movedTokens := 0
		for id, v := range tokens {
			if kid, ok := keyring.KeyID([]byte(v)); ok && kid == k.Newest() {
				continue
			}
			token, err := k.Open([]byte(v), publish.TesterTokenContext(id))
			if err != nil {
				return fmt.Errorf("tester %d's update token: %w; the signing keys are rewrapped, the testers' tokens after it are not: run rewrap again with the key it names", id, err)
			}
			if err := st.Store.ReplaceTesterToken(ctx, id, v, string(k.Seal(token, publish.TesterTokenContext(id)))); err != nil {
				return err
			}
			movedTokens++
		}
		// And webhook secrets (their events are signed with them).
		hooks, err := webhook.ResealSecrets(ctx, st.Store, k, true)
		if err != nil {
			return fmt.Errorf("%w; the signing keys and testers' tokens are rewrapped, the webhook secrets after it are not: run rewrap again with the key it names", err)
		}
		fmt.Fprintf(stderr, "Rewrapped %d of %d signing keys, %d of %d testers' update tokens and %d of %d webhook secrets; all are now sealed with key %s.\n",
			moved, len(keys), movedTokens, len(tokens), hooks.Changed, hooks.Total, k.Newest())
		return nil
	})
}
