package fetch

import "net/http"

// Under Node, net/http reaches the tests' servers over Go's own network.
func init() { DefaultClient = http.DefaultClient }
