package api

import (
	_ "embed"
	"net/http"
)

// openAPI is the OpenAPI 3.1 description of every REST route of the product: this
// function's (Routes) and the pins function's (/api/chats/{chatId}/pins*, tools). Edit
// openapi.json together with Routes; TestOpenAPI checks them against each other and
// against the live mux.
//
//go:embed openapi.json
var openAPI []byte

func serveOpenAPI(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "public, max-age=300")
	_, _ = w.Write(openAPI)
}

// OpenAPIDocument returns the OpenAPI 3.1 document served at OpenAPIPath (JSON bytes; the
// caller must not modify them). Tests validate REST responses against it.
func OpenAPIDocument() []byte { return openAPI }
