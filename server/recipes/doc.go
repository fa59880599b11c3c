// Package recipes holds the recipes the README gives, as files its tests
// run: github-actions.yml publishes from GitHub Actions with curl and jq.
package recipes
