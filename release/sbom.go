package main

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// A CycloneDX 1.5 SBOM: only the fields the release fills.
type cdxBOM struct {
	BOMFormat    string          `json:"bomFormat"`
	SpecVersion  string          `json:"specVersion"`
	SerialNumber string          `json:"serialNumber"`
	Version      int             `json:"version"`
	Metadata     cdxMetadata     `json:"metadata"`
	Components   []cdxComponent  `json:"components"`
	Dependencies []cdxDependency `json:"dependencies"`
}

type cdxMetadata struct {
	Timestamp string       `json:"timestamp"`
	Tools     cdxTools     `json:"tools"`
	Component cdxComponent `json:"component"`
}

type cdxTools struct {
	Components []cdxComponent `json:"components"`
}

type cdxComponent struct {
	Type       string        `json:"type"`
	BOMRef     string        `json:"bom-ref,omitempty"`
	Name       string        `json:"name"`
	Version    string        `json:"version,omitempty"`
	PURL       string        `json:"purl,omitempty"`
	Licenses   []cdxLicense  `json:"licenses,omitempty"`
	Properties []cdxProperty `json:"properties,omitempty"`
}

type cdxLicense struct {
	License struct {
		ID string `json:"id"`
	} `json:"license"`
}

type cdxProperty struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

type cdxDependency struct {
	Ref       string   `json:"ref"`
	DependsOn []string `json:"dependsOn"`
}

const modulePath = "github.com/idemctl/idemctl"

// purl is a Go module's package URL: pkg:golang/PATH@VERSION.
func purl(path, version string) string {
	return "pkg:golang/" + path + "@" + strings.ReplaceAll(version, "+", "%2B")
}

// serialFor is the SBOM's serial number, derived from what it describes
// (commit and platform) so a rebuild gives the same one: a UUID of
// version 8 (RFC 9562's for custom derivations).
func serialFor(src source, p platform) string {
	h := sha256.Sum256([]byte(src.Revision + " " + p.String()))
	h[6] = h[6]&0x0f | 0x80
	h[8] = h[8]&0x3f | 0x80
	return fmt.Sprintf("urn:uuid:%x-%x-%x-%x-%x", h[0:4], h[4:6], h[6:8], h[8:10], h[10:16])
}

// sbom is the CycloneDX JSON of one platform's binary: idemctl itself,
// then every module linked into it and the Go standard library.
func sbom(src source, p platform, goVersion string, mods []module) ([]byte, error) {
	main := cdxComponent{Type: "application", Name: modulePath, Version: src.Version, PURL: purl(modulePath, src.Version),
		Properties: []cdxProperty{{"idemctl:revision", src.Revision}, {"idemctl:platform", p.String()}}}
	main.BOMRef = main.PURL
	var apache cdxLicense
	apache.License.ID = "Apache-2.0"
	main.Licenses = []cdxLicense{apache}
	bom := cdxBOM{BOMFormat: "CycloneDX", SpecVersion: "1.5", SerialNumber: serialFor(src, p), Version: 1,
		Metadata: cdxMetadata{Timestamp: src.Time.Format(time.RFC3339), Component: main,
			Tools: cdxTools{Components: []cdxComponent{{Type: "application", Name: "idemctl release (go run ./release)", Version: src.Version}}}}}
	dep := cdxDependency{Ref: main.BOMRef, DependsOn: []string{}}
	for _, m := range mods {
		c := cdxComponent{Type: "library", Name: m.Path, Version: m.Version, PURL: purl(m.Path, m.Version)}
		c.BOMRef = c.PURL
		bom.Components = append(bom.Components, c)
		dep.DependsOn = append(dep.DependsOn, c.BOMRef)
	}
	std := "v" + strings.TrimPrefix(goVersion, "go")
	stdlib := cdxComponent{Type: "library", BOMRef: purl("stdlib", std), Name: "stdlib", Version: std, PURL: purl("stdlib", std)}
	bom.Components = append(bom.Components, stdlib)
	dep.DependsOn = append(dep.DependsOn, stdlib.BOMRef)
	bom.Dependencies = []cdxDependency{dep}
	out, err := json.MarshalIndent(bom, "", "  ")
	return append(out, '\n'), err
}
