package openai

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/agentharness/harness/internal/wiretest"
)

func TestNewMissingKeyNamesTheVariable(t *testing.T) {
	_, err := New(&Options{Model: "gpt-test", Getenv: func(string) string { return "" }})
	if !errors.Is(err, ErrNoAPIKey) || !strings.Contains(err.Error(), "OPENAI_API_KEY") {
		t.Fatalf("err = %v", err)
	}
}

func TestNewChecksOptions(t *testing.T) {
	env := func(string) string { return "k" }
	for _, o := range []*Options{
		nil,
		{Getenv: env},
		{Model: "m", BaseURL: "127.0.0.1:8080/v1", Getenv: env},
		{Model: "m", MaxTokens: -1, Getenv: env},
	} {
		if _, err := New(o); err == nil {
			t.Errorf("New(%+v) succeeded", o)
		}
	}
}

func TestNewFromEnvironment(t *testing.T) {
	srv := wiretest.New(t)
	srv.Enqueue(wiretest.JSON(okBody))
	env := map[string]string{envBaseURL: srv.URL + "/compat/v1", envAPIKey: "sk-from-env"}
	m, err := New(&Options{Model: "local", Getenv: func(k string) string { return env[k] }})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Generate(context.Background(), userRequest("x")); err != nil {
		t.Fatal(err)
	}
	r := srv.Requests()[0]
	if r.Path != "/compat/v1/chat/completions" || r.Header.Get("Authorization") != "Bearer sk-from-env" {
		t.Errorf("%s with %q", r.Path, r.Header.Get("Authorization"))
	}
	if m.modelName() != "local" {
		t.Errorf("Name = %q", m.modelName())
	}
}

func TestOptionsWinOverEnvironment(t *testing.T) {
	srv := wiretest.New(t)
	srv.Enqueue(wiretest.JSON(okBody))
	env := map[string]string{envBaseURL: "http://127.0.0.1:1/v1", envAPIKey: "sk-env"}
	m, err := New(&Options{Model: "m", BaseURL: srv.URL + "/v1/", APIKey: "sk-opt", Getenv: func(k string) string { return env[k] }})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Generate(context.Background(), userRequest("x")); err != nil {
		t.Fatal(err)
	}
	if got := srv.Requests()[0].Header.Get("Authorization"); got != "Bearer sk-opt" {
		t.Errorf("Authorization = %q", got)
	}
}
