package toolselect

import "strings"

// synonymGroups are words a user and a tool author use for the same thing.
// A request term also matches the other words of its groups, at
// synonymWeight: "remove the bug" finds delete_issue. The groups are
// general vocabulary of software tools, not tuned to one tool set.
var synonymGroups = [][]string{
	// actions
	{"create", "add", "new", "make", "open", "start", "register", "insert", "setup"},
	{"delete", "remove", "erase", "drop", "destroy", "trash", "purge", "revoke"},
	{"update", "edit", "change", "modify", "set", "rename", "fix", "replace", "adjust", "patch"},
	{"get", "show", "fetch", "read", "view", "display", "retrieve", "see", "open", "look"},
	{"list", "show", "browse", "enumerate", "which", "all"},
	{"search", "find", "query", "lookup", "look", "locate", "mention", "contain", "match"},
	{"send", "email", "mail", "message", "notify"},
	{"close", "resolve", "finish", "complete", "done", "tick"},
	{"assign", "give", "delegate", "hand", "owner", "reassign"},
	{"invite", "onboard", "add"},
	{"publish", "release", "launch", "live"},
	{"unpublish", "withdraw", "hide", "retract"},
	{"schedule", "book", "plan", "arrange"},
	{"restore", "revert", "undo", "rollback", "recover"},
	{"export", "download", "report", "csv", "pdf"},
	{"upload", "attach", "import"},
	{"count", "number", "total", "many", "much"},
	{"merge", "combine", "dedupe", "consolidate"},
	{"translate", "language", "localize"},
	{"moderate", "approve", "spam", "reject", "review"},
	{"upgrade", "downgrade", "plan", "tier"},
	// things
	{"issue", "bug", "ticket", "defect", "problem", "incident"},
	{"post", "article", "blog", "story", "entry", "draft"},
	{"comment", "reply", "feedback", "response", "discussion"},
	{"user", "member", "person", "people", "teammate", "colleague", "collaborator", "account", "who"},
	{"team", "group", "squad"},
	{"role", "permission", "admin", "access", "editor"},
	{"meeting", "call", "event", "appointment"},
	{"calendar", "agenda", "schedule"},
	{"invoice", "bill", "receipt", "charge"},
	{"subscription", "plan", "seat", "renew", "renewal", "billing"},
	{"payment", "card", "credit"},
	{"view", "visit", "traffic", "visitor", "read", "popular", "pageview"},
	{"quota", "limit", "usage", "allowance"},
	{"contact", "lead", "customer", "client", "person"},
	{"deal", "opportunity", "pipeline", "sale"},
	{"webhook", "callback", "endpoint", "integration", "hook"},
	{"revision", "version", "history", "previous"},
	{"media", "image", "file", "picture", "photo", "screenshot", "asset", "attachment"},
	{"label", "tag", "category"},
	{"profile", "timezone", "avatar", "preference"},
	{"notification", "alert", "unread", "inbox"},
	{"top", "most", "best", "popular", "rank"},
	{"task", "todo", "reminder", "remind", "chore"},
	{"key", "token", "credential", "secret"},
	{"milestone", "deadline", "due", "goal"},
	{"menu", "navigation", "nav", "link"},
	{"setting", "config", "configuration", "option"},
	{"form", "submission", "signup", "survey"},
	{"source", "referrer", "channel", "referral", "coming"},
}

// synonymWeight is the weight of a synonym of a request term, against 1 for
// the term itself.
const synonymWeight = 0.4

// synonyms maps a stemmed word to the stemmed words of its groups.
var synonyms = func() map[string][]string {
	m := map[string][]string{}
	for _, g := range synonymGroups {
		stems := make([]string, len(g))
		for i, w := range g {
			stems[i] = stem(strings.ToLower(w))
		}
		for _, a := range stems {
			for _, b := range stems {
				if a != b && !contains(m[a], b) {
					m[a] = append(m[a], b)
				}
			}
		}
	}
	return m
}()

func contains(s []string, x string) bool {
	for _, e := range s {
		if e == x {
			return true
		}
	}
	return false
}

// expandQuery weighs the terms of a request: each term counts 1 per
// occurrence, and each synonym not itself in the request synonymWeight.
func expandQuery(terms []string) map[string]float64 {
	q := map[string]float64{}
	for _, t := range terms {
		q[t]++
	}
	for _, t := range terms {
		for _, s := range synonyms[t] {
			if !contains(terms, s) {
				q[s] = max(q[s], synonymWeight)
			}
		}
	}
	return q
}
