// Package scaleout holds the tests of a scaled-out Betaport: several
// `betaport serve` replicas (cli.Main) on different ports over one
// PostgreSQL database and one S3 bucket, as the README's "Scaling out"
// describes. The tests start a throwaway PostgreSQL cluster and a versitygw
// gateway on loopback (package testenv); they are skipped only when
// BETAPORT_SKIP_SCALEOUT=1.
package scaleout
