package credential

import (
	"strings"
	"testing"
)

func TestPasswords(t *testing.T) {
	h := HashPassword("correct horse")
	if !strings.HasPrefix(h, "$argon2id$v=19$m=19456,t=2,p=1$") {
		t.Fatalf("hash %q is not argon2id in PHC format", h)
	}
	if h == HashPassword("correct horse") {
		t.Fatal("two hashes of one password are equal: no salt")
	}
	if !CheckPassword(h, "correct horse") {
		t.Fatal("the right password is refused")
	}
	for _, wrong := range []string{"", "correct horse ", "Correct horse"} {
		if CheckPassword(h, wrong) {
			t.Fatalf("wrong password %q accepted", wrong)
		}
	}
	if CheckPassword("", "anything") || CheckPassword("$bcrypt$x", "x") {
		t.Fatal("a missing or foreign hash accepted a password")
	}
}

func TestTokens(t *testing.T) {
	a, b := NewToken(), NewToken()
	if a == b || len(a) != 43 {
		t.Fatalf("tokens %q %q: want distinct 256-bit tokens", a, b)
	}
	if HashToken(a) == a || HashToken(a) != HashToken(a) || len(HashToken(a)) != 64 {
		t.Fatal("HashToken is not a stable SHA-256")
	}
}
