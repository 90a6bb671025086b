// Command spawngate decides, before an orchestrator dispatches sub-agents,
// whether each child of a spawn plan may exist with the powers it asks for.
// See the README, and 'spawngate help'.
package main

import (
	"os"

	"github.com/spawngate/spawngate/internal/cli"
)

func main() { os.Exit(cli.Main()) }
