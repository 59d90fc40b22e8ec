package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/agentharness/harness"
	"github.com/agentharness/harness/store"
	"github.com/agentharness/harness/store/postgres"
)

// Several processes record into one database; a second turn of a
// conversation that another process is recording is refused at once.
// (It needs a server, so it is compiled, not run.)
func ExampleOpen() {
	ctx := context.Background()
	s, err := postgres.Open(ctx, "postgres://harness@db.internal/harness", nil)
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	model := harness.ModelFunc(func(ctx context.Context, req *harness.Request) (*harness.Response, error) {
		return &harness.Response{Message: harness.Message{Parts: []harness.Part{harness.TextPart("hello")}}}, nil
	})
	agent, err := harness.New(model, &harness.Options{Recorder: s, Observer: harness.Observer(s.Observe)})
	if err != nil {
		log.Fatal(err)
	}
	conv, err := s.Load(ctx, "c_shared")
	if errors.Is(err, store.ErrNotFound) {
		conv = harness.NewConversation("c_shared")
	} else if err != nil {
		log.Fatal(err)
	}
	if _, err := agent.Run(ctx, conv, "hi"); errors.Is(err, store.ErrConversationBusy) {
		fmt.Println("another process is answering this conversation; try again later")
	}
}
