// Command betaport runs and administers a Betaport service. See
// `betaport help`.
package main

import (
	"context"
	"os"

	"github.com/betaport/betaport/server/cli"
)

func main() {
	os.Exit(cli.Run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}
