// Package credential holds the secrets of accounts: password hashes (argon2id,
// memory-hard, from golang.org/x/crypto) and random tokens, stored only as
// their SHA-256 hashes.
package credential

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/crypto/argon2"

	"github.com/betaport/betaport/app/betaport"
)

// Argon2id parameters: OWASP's minimum recommendation (19 MiB, 2 passes),
// which keeps a sign-in near 50 ms on one core.
const (
	argonTime    = 2
	argonMemory  = 19 * 1024 // KiB
	argonThreads = 1
	argonKeyLen  = 32
	saltLen      = 16
)

var b64 = base64.RawStdEncoding

// HashPassword returns a PHC-format argon2id hash of password.
func HashPassword(password string) string {
	salt := make([]byte, saltLen)
	rand.Read(salt)
	key := argon2.IDKey([]byte(password), salt, argonTime, argonMemory, argonThreads, argonKeyLen)
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s",
		argon2.Version, argonMemory, argonTime, argonThreads, b64.EncodeToString(salt), b64.EncodeToString(key))
}

// dummyHash is checked against when there is no user, so an unknown e-mail
// costs what a wrong password costs and the timing tells nothing.
var dummyHash = HashPassword("no user has this password")

// CheckPassword reports whether password matches hash. An empty hash (no
// such user) is checked against a dummy so it takes the same time.
func CheckPassword(hash, password string) bool {
	if hash == "" {
		checkPHC(dummyHash, password)
		return false
	}
	ok, err := checkPHC(hash, password)
	return err == nil && ok
}

func checkPHC(hash, password string) (bool, error) {
	parts := strings.Split(hash, "$")
	if len(parts) != 6 || parts[1] != "argon2id" {
		return false, errors.New("auth: not an argon2id hash")
	}
	var version int
	var mem, time uint32
	var threads uint8
	if _, err := fmt.Sscanf(parts[2], "v=%d", &version); err != nil || version != argon2.Version {
		return false, errors.New("auth: unsupported argon2 version")
	}
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &mem, &time, &threads); err != nil {
		return false, err
	}
	salt, err := b64.DecodeString(parts[4])
	if err != nil {
		return false, err
	}
	want, err := b64.DecodeString(parts[5])
	if err != nil {
		return false, err
	}
	got := argon2.IDKey([]byte(password), salt, time, mem, threads, uint32(len(want)))
	return subtle.ConstantTimeCompare(got, want) == 1, nil
}

// NewToken returns a random 256-bit token, URL-safe.
func NewToken() string {
	b := make([]byte, 32)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// NewAccessToken returns a new access token's secret: a token with the
// prefix that tells it apart (betaport.TokenPrefix).
func NewAccessToken() string { return betaport.TokenPrefix + NewToken() }

// HashToken is what is stored of a token: a leaked database holds no
// usable session or link.
func HashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// NewPassword returns a random password for people to copy.
func NewPassword() string {
	b := make([]byte, 15)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}
