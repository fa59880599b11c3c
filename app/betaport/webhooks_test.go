package betaport_test

import (
	"testing"

	"github.com/betaport/betaport/app/betaport"
)

// TestWebhookURLPorts: a port a connection can be made to, or none.
func TestWebhookURLPorts(t *testing.T) {
	for raw, ok := range map[string]bool{
		"https://ci.example.com/hook":       true,
		"https://ci.example.com:8443/hook":  true,
		"http://127.0.0.1:1/hook":           true,
		"https://ci.example.com:65535/hook": true,
		"http://[::1]:8080/hook":            true,
		"http://127.0.0.1:99999/hook":       false,
		"https://ci.example.com:65536/hook": false,
		"https://ci.example.com:0/hook":     false,
		"https://ci.example.com:08443/hook": false,
		"https://ci.example.com:/hook":      false,
		"http://[::1]:70000/hook":           false,
	} {
		err := betaport.ValidateWebhookURL(raw)
		if (err == nil) != ok {
			t.Errorf("ValidateWebhookURL(%q) = %v, want ok %v", raw, err, ok)
		}
		if err != nil && betaport.ErrorCode(err) != betaport.EINVALID {
			t.Errorf("ValidateWebhookURL(%q): code %q", raw, betaport.ErrorCode(err))
		}
	}
}
