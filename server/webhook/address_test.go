package webhook

import (
	"errors"
	"net/netip"
	"strings"
	"testing"
)

// Addresses that are not public however they are written: those netip
// names, the reserved ranges it does not, and IPv6 addresses that embed a
// private IPv4 address (NAT64, 6to4, IPv4-compatible, IPv4-translated) or
// tunnel to one that cannot be checked (Teredo). Each is refused both when
// a webhook is made with it and when the worker would connect to it.
func TestAddressesThatAreNotPublic(t *testing.T) {
	for addr, want := range map[string]string{
		"127.0.0.1":                            "loopback",
		"::1":                                  "loopback",
		"10.0.0.1":                             "private",
		"100.64.0.1":                           "private",
		"169.254.169.254":                      "link-local",
		"0.0.0.0":                              "unspecified",
		"0.1.2.3":                              "this network",
		"0.0.0.1":                              "this network",
		"192.0.0.8":                            "reserved",
		"198.18.0.1":                           "reserved",
		"192.0.2.1":                            "reserved",
		"192.88.99.1":                          "6to4 relay anycast",
		"240.0.0.1":                            "reserved",
		"255.255.255.255":                      "reserved",
		"fec0::1":                              "site-local",
		"3fff::1":                              "documentation",
		"2001:10::1":                           "ORCHID",
		"2001:20::1":                           "ORCHIDv2",
		"feff:ffff::1":                         "site-local",
		"2001::1":                              "Teredo",
		"2001:0:4136:e378:8000:63bf:3fff:fdd2": "Teredo",
		"64:ff9b::a00:1":                       "NAT64 address of 10.0.0.1, a private address",
		"64:ff9b::7f00:1":                      "NAT64 address of 127.0.0.1, a loopback address",
		"64:ff9b::a9fe:a9fe":                   "NAT64 address of 169.254.169.254, a link-local address",
		"64:ff9b:1::a00:1":                     "local-use NAT64",
		"2002:a00:1::1":                        "6to4 address of 10.0.0.1, a private address",
		"2002:7f00:1::":                        "6to4 address of 127.0.0.1, a loopback address",
		"2002:c0a8:101::1":                     "6to4 address of 192.168.1.1, a private address",
		"::a00:1":                              "IPv4-compatible address of 10.0.0.1, a private address",
		"::127.0.0.1":                          "IPv4-compatible address of 127.0.0.1, a loopback address",
		"::2":                                  "IPv4-compatible address of 0.0.0.2",
		"::ffff:0:a00:1":                       "IPv4-translated address of 10.0.0.1, a private address",
		"::ffff:10.0.0.1":                      "private",
		"2001:db8::1":                          "reserved",
		"100::1":                               "reserved",
		"fc00::1":                              "private",
		"fe80::1%eth0":                         "link-local",
		"ff02::1":                              "multicast",
		"224.0.0.1":                            "multicast",
	} {
		ip := netip.MustParseAddr(addr)
		if why := privateAddr(ip); !strings.Contains(why, want) {
			t.Errorf("privateAddr(%s) = %q, want it to say %q", addr, why, want)
		}
		// The worker's dialer refuses it, before connecting.
		err := refuseDial("tcp", netip.AddrPortFrom(ip, 443).String())
		var refused *refusedError
		if !errors.As(err, &refused) || !strings.Contains(err.Error(), want) {
			t.Errorf("dialling %s: %v; want a refusal saying %q", addr, err, want)
		}
	}
	// Public addresses, and IPv6 addresses that embed public ones, pass.
	for _, addr := range []string{"8.8.8.8", "1.1.1.1", "172.32.0.1", "192.169.0.1", "2606:4700:4700::1111", "2001:4860:4860::8888",
		"64:ff9b::808:808", "2002:808:808::1", "::808:808", "2003::1"} {
		ip := netip.MustParseAddr(addr)
		if why := privateAddr(ip); why != "" {
			t.Errorf("privateAddr(%s) = %q, want public", addr, why)
		}
		if err := refuseDial("tcp", netip.AddrPortFrom(ip, 443).String()); err != nil {
			t.Errorf("dialling %s: %v, want allowed", addr, err)
		}
	}
}
