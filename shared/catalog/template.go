package catalog

import (
	"regexp"
	"slices"
	"strings"

	"github.com/agentpack/gateway/shared/apperr"
	"github.com/agentpack/gateway/shared/db"
)

var urlTemplateRef = regexp.MustCompile(`\{([^{}]*)\}`)

// ValidURLValue reports whether v may fill a URL {variable} (docs/REGISTRY.md): 1 to 200
// of A-Z a-z 0-9 . _ - ~, and not "." or "..": no "/", "?", "#", "@", ":" or "%", so a value
// cannot change the URL's host, path structure or query.
func ValidURLValue(v string) bool {
	if v == "" || len(v) > 200 || v == "." || v == ".." {
		return false
	}
	for _, c := range v {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-' || c == '~') {
			return false
		}
	}
	return true
}

// FillURL returns entry e's URL with each {variable} of e.URLVariables replaced by its
// value in vals, or its default. Errors are VALIDATION_ERROR with details.field
// "variables.<name>": a required variable without a value, a value that is not
// ValidURLValue or not one of the variable's choices, a value for a variable e does not
// declare. An entry without variables returns its URL (vals must then be empty).
func FillURL(e *db.CatalogEntry, vals map[string]string) (string, error) {
	declared := map[string]db.URLVariable{}
	for _, v := range e.URLVariables {
		declared[v.Name] = v
	}
	for name := range vals {
		if _, ok := declared[name]; !ok {
			return "", apperr.New(apperr.Validation, "%s declares no URL variable %q", e.Name, name).
				WithDetails(map[string]string{"field": "variables." + name})
		}
	}
	filled := map[string]string{}
	for _, v := range e.URLVariables {
		val, ok := vals[v.Name]
		field := map[string]string{"field": "variables." + v.Name}
		switch {
		case !ok && v.Default != "":
			val = v.Default
		case !ok:
			return "", apperr.New(apperr.Validation, "variable %s is required to install %s", v.Name, e.Name).
				WithHint(v.Description).WithDetails(field)
		case !ValidURLValue(val):
			return "", apperr.New(apperr.Validation, "variable %s must be 1 to 200 of A-Z a-z 0-9 . _ - ~", v.Name).WithDetails(field)
		case len(v.Choices) > 0 && !slices.Contains(v.Choices, val):
			return "", apperr.New(apperr.Validation, "variable %s must be one of %s", v.Name, strings.Join(v.Choices, ", ")).WithDetails(field)
		}
		filled[v.Name] = val
	}
	return urlTemplateRef.ReplaceAllStringFunc(e.URL, func(m string) string {
		if v, ok := filled[m[1:len(m)-1]]; ok {
			return v
		}
		return m
	}), nil
}
