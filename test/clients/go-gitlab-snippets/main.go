// One call of go-gitlab (Debian's golang-github-xanzy-go-gitlab-dev, 0.73.1) on personal snippets, for
// test/clients/go-gitlab-snippets.test.ts, which builds this program once (GOPATH mode, offline):
//
//	go-gitlab-snippets BASE_URL TOKEN CALL [ARGUMENT ...]
//
// Prints {"value": what the call returned, as go-gitlab decoded it} (and for a list "page": the Response's
// pagination fields) or, when it returned an error,
// {"error": {"status", "message", "body"}}: the *gitlab.ErrorResponse a Go program gets to see.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strconv"

	"github.com/xanzy/go-gitlab"
)

func main() {
	baseURL, token, call, args := os.Args[1], os.Args[2], os.Args[3], os.Args[4:]
	client, err := gitlab.NewClient(token, gitlab.WithBaseURL(baseURL))
	if err != nil {
		fail(err)
	}
	value, page, err := do(client.Snippets, client, call, args)
	var answer map[string]interface{}
	var response *gitlab.ErrorResponse
	switch {
	case errors.As(err, &response):
		answer = map[string]interface{}{"error": map[string]interface{}{
			"status":  response.Response.StatusCode,
			"message": response.Message,
			"body":    json.RawMessage(orNull(response.Body)),
		}}
	case err != nil:
		fail(err)
	default:
		answer = map[string]interface{}{"value": value}
		if page != nil {
			answer["page"] = page
		}
	}
	out, err := json.Marshal(answer)
	if err != nil {
		fail(err)
	}
	fmt.Println(string(out))
}

// do makes one call: the SnippetsService's own methods, and, for what 0.73.1 has no method or option for
// (file actions on update, one file's raw content), the client's NewRequest and Do, as a Go program would.
func do(snippets *gitlab.SnippetsService, client *gitlab.Client, call string, args []string) (interface{}, *page, error) {
	switch call {
	case "CreateSnippet":
		opt := &gitlab.CreateSnippetOptions{}
		decode(args[0], opt)
		s, _, err := snippets.CreateSnippet(opt)
		return s, nil, err
	case "GetSnippet":
		s, _, err := snippets.GetSnippet(id(args[0]))
		return s, nil, err
	case "ListSnippets":
		opt := &gitlab.ListSnippetsOptions{}
		decode(args[0], opt)
		s, resp, err := snippets.ListSnippets(opt)
		return s, pageOf(resp), err
	case "ExploreSnippets":
		opt := &gitlab.ExploreSnippetsOptions{}
		decode(args[0], opt)
		s, resp, err := snippets.ExploreSnippets(opt)
		return s, pageOf(resp), err
	case "SnippetContent":
		b, _, err := snippets.SnippetContent(id(args[0]))
		return string(b), nil, err
	case "UpdateSnippet":
		opt := &gitlab.UpdateSnippetOptions{}
		decode(args[1], opt)
		s, _, err := snippets.UpdateSnippet(id(args[0]), opt)
		return s, nil, err
	case "DeleteSnippet":
		resp, err := snippets.DeleteSnippet(id(args[0]))
		if err != nil {
			return nil, nil, err
		}
		return resp.StatusCode, nil, nil
	case "UpdateSnippetFiles":
		var body map[string]interface{}
		decode(args[1], &body)
		req, err := client.NewRequest(http.MethodPut, "snippets/"+args[0], body, nil)
		if err != nil {
			return nil, nil, err
		}
		s := new(gitlab.Snippet)
		_, err = client.Do(req, s)
		return s, nil, err
	case "SnippetFileContent":
		path := fmt.Sprintf("snippets/%s/files/%s/%s/raw", args[0], url.PathEscape(args[1]), url.PathEscape(args[2]))
		req, err := client.NewRequest(http.MethodGet, path, nil, nil)
		if err != nil {
			return nil, nil, err
		}
		var b bytes.Buffer
		_, err = client.Do(req, &b)
		return b.String(), nil, err
	}
	fail(fmt.Errorf("unknown call %q", call))
	return nil, nil, nil
}

// page is what go-gitlab read of a list's pagination headers (X-Total, X-Page, X-Next-Page, ...).
type page struct {
	TotalItems   int `json:"total_items"`
	TotalPages   int `json:"total_pages"`
	ItemsPerPage int `json:"items_per_page"`
	CurrentPage  int `json:"current_page"`
	NextPage     int `json:"next_page"`
	PreviousPage int `json:"previous_page"`
}

func pageOf(resp *gitlab.Response) *page {
	if resp == nil {
		return nil
	}
	return &page{resp.TotalItems, resp.TotalPages, resp.ItemsPerPage, resp.CurrentPage, resp.NextPage, resp.PreviousPage}
}

func id(arg string) int {
	n, err := strconv.Atoi(arg)
	if err != nil {
		fail(err)
	}
	return n
}

func decode(arg string, into interface{}) {
	if err := json.Unmarshal([]byte(arg), into); err != nil {
		fail(err)
	}
}

func orNull(body []byte) []byte {
	if json.Valid(body) {
		return body
	}
	out, _ := json.Marshal(string(body))
	return out
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, err)
	os.Exit(2)
}
