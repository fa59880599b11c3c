// Package recipes holds the recipes the README gives, as files its tests
// run: github-actions.yml installs the betaport command from the service
// and publishes with it; github-actions-curl.yml publishes with curl and jq
// alone.
package recipes
