// Package schemas holds the JSON Schemas (draft 2020-12) that define the
// spawn plan and policy formats. They are the documentation of the formats
// and are embedded into the binary, so the gate validates against exactly
// what the repository shows.
package schemas

import "embed"

// FS holds plan.schema.json, child.schema.json and policy.schema.json.
//
//go:embed *.schema.json
var FS embed.FS

// BaseURL is the prefix of every schema's $id. The schemas refer to each
// other relative to it; nothing is ever fetched from it.
const BaseURL = "https://spawngate.dev/schemas/"
