package flows_test

import (
	"context"
	"testing"

	"github.com/betaport/betaport/app/api"
	"github.com/betaport/betaport/app/model"
)

// A typo, then the right password: the service refuses the first, the
// page says so, and the second signs the browser in and goes home; the
// browser's cookie then speaks for the admin.
func TestSignInAfterATypoAgainstTheService(t *testing.T) {
	t.Parallel()
	m, d := service(t)
	c := browserClient(t, m)
	p := openPage(t, c)
	var went []string
	var s *model.SignIn
	p.Do(func() {
		s = model.NewSignIn(model.SignInConfig{Env: p.Env, Session: model.NewSession(nil), Navigate: func(path string) { went = append(went, path) }})
		s.Open("")
		s.Email, s.Password = d.Admins[0].Email, "not-"+d.Admins[0].Password
		s.Submit()
	})
	p.Wait("the typo refused", func() bool { return !s.Busy && s.Err != nil })
	p.Do(func() {
		if pr, ok := api.AsProblem(s.Err); !ok || pr.Status != 401 {
			t.Errorf("the typo was answered %v, want a 401 problem", s.Err)
		}
		s.Password = d.Admins[0].Password
		s.Submit()
	})
	p.Wait("signed in", func() bool { return len(went) > 0 })
	p.Do(func() {
		if went[0] != model.PathHome || s.Err != nil {
			t.Errorf("after the right password: went %v, error %v; want home and no error", went, s.Err)
		}
	})
	who, err := c.Session(context.Background())
	if err != nil || who.Kind != api.KindAdmin || who.User.Email != d.Admins[0].Email {
		t.Fatalf("the browser's session is %+v (%v), want the admin", who, err)
	}
}
