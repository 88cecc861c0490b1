package gateway

import (
	"bytes"
	"errors"
	"io"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

var printer = message.NewPrinter(language.English)

func bytesReader(b []byte) io.Reader { return bytes.NewReader(b) }

// shortSchemaError is a one-line summary of a schema violation: the first leaf error
// with its instance location ("/limit: maximum: got 500, want 100").
func shortSchemaError(err error) string {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return "arguments do not match the input schema"
	}
	for len(ve.Causes) > 0 {
		ve = ve.Causes[0]
	}
	loc := "/" + strings.Join(ve.InstanceLocation, "/")
	return loc + ": " + ve.ErrorKind.LocalizedString(printer)
}
