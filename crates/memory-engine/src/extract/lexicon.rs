//! The words the offline extractor (`offline`) reads sentences by: what opens a request, what
//! points elsewhere, what is a moment rather than a habit, what is no verb. Lists, one concern
//! each, kept apart from the rules so both stay readable (this file is not rustfmt-ed: one word
//! per line would bury the rules' vocabulary).

/// Words that open a sentence without changing what it says: greetings, acknowledgements,
/// politeness, connectives, and the scope of a team habit ("in this repo we …").
pub(super) const DISCOURSE: &[&str] = &[
    "ok so", "okay so", "ok", "okay", "oh and", "oh also", "oh", "hmm", "hmmm", "hm", "um", "uh",
    "hey", "hi", "hello", "so", "also",
    "and", "but", "btw", "by the way", "one more thing", "one thing", "sounds good", "great",
    "perfect", "nice", "thanks", "thank you", "cool", "alright", "all right", "right,", "no,",
    "well", "please",
    "pls", "plz", "kindly", "actually", "yes", "yeah",
    "yep", "got it", "understood", "important", "just", "around here", "here", "in this repo",
    "in this repository", "in this project", "in this codebase", "in this team", "in our team",
    "on our team", "on this team", "in this company", "at our company", "fwiw",
    "for what it's worth", "imo", "imho", "tbh", "honestly", "to be clear", "to be honest",
];

/// A question asked politely is a request: "could you remember that …?".
pub(super) const POLITE: &[&str] = &[
    "can you", "could you", "would you", "will you", "can u", "could u",
];

/// What a request's object may not start with: it points at something else ("this", "that",
/// "it", "the above"), asks ("what we changed", "when we had that outage"), or is an infinitive
/// handled apart.
pub(super) const DEICTIC: &[&str] = &[
    "this", "that", "these", "those", "it", "here", "there", "what", "when", "where", "which",
    "who", "whom", "whose", "why", "how", "whether", "if", "above", "below", "one", "for", "next",
    "later", "down", "again", "too", "as", "so", "please", "everything", "anything", "something",
    "me", "you", "them", "him", "her", "us",
];

/// Things a person pastes: "remember that trace", "that output".
pub(super) const PASTED_NOUNS: &[&str] = &[
    "log", "logs", "trace", "traces", "stack", "stacktrace", "backtrace", "traceback", "output",
    "error", "errors", "diff", "patch", "tree", "json", "yaml", "snippet", "message", "command",
    "table", "list", "result", "results", "dump", "panic", "payload", "response", "screenshot",
    "link", "number", "numbers", "code", "query", "one", "thing", "stuff", "file", "config",
];

/// What is built, as the whole project: "the library must stay compatible with Python 3.8".
pub(super) const BUILT: &[&str] = &[
    "library", "package", "crate", "sdk", "framework", "plugin", "extension", "cli", "gem",
    "module",
];

/// What "this …" may name and still be standing: the project itself.
pub(super) const PROJECT_SCOPE: &[&str] = &[
    "project", "repo", "repository", "codebase", "team", "company", "org", "organisation",
    "organization", "product", "monorepo", "workspace",
];

/// What only the person can do: "remember to drink some water" is a reminder for them.
pub(super) const PERSONAL_ACTIONS: &[&str] = &[
    "drink", "eat", "sleep", "stretch", "call", "text", "phone", "buy", "book", "pick", "take",
    "go", "walk", "water", "pay", "feed", "rest", "breathe", "leave", "grab", "renew", "visit",
    "meet", "wake", "exercise", "shower", "cook", "clean", "shop", "email", "reply", "thank",
];

/// Words after "always"/"never"/"don't" that show it is no imperative: "never mind", "don't
/// worry", "always the same", "never seen", "always happy".
pub(super) const NOT_VERBS: &[&str] = &[
    "a", "an", "the", "this", "that", "these", "those", "it", "its", "mind", "worry", "bother",
    "panic", "again", "seen", "been", "had", "heard", "thought", "knew", "got", "gotten", "happy",
    "glad", "sure", "fun", "good", "great", "nice", "easy", "hard", "same", "something", "anything",
    "nothing", "someone", "anyone", "so", "too", "more", "less", "fine", "ready", "late", "welcome",
    "once", "twice", "enough", "my", "your", "our", "their", "his", "her", "me", "you", "we",
    "they", "i", "he", "she", "there", "here", "when", "what", "how", "why", "forget", "apologize",
    "apologise", "sorry", "ever", "gonna", "in", "on", "at", "for", "seem", "seems", "end", "tend",
    "manage", "wanted", "wish",
];

/// Verbs whose base form ends in "ed".
pub(super) const ED_VERBS: &[&str] = &[
    "need", "feed", "seed", "embed", "proceed", "exceed", "succeed", "shred", "speed", "heed",
    "bleed", "breed", "weed", "shed",
];

pub(super) const IRREGULAR_PAST: &[&str] = &[
    "had", "was", "were", "did", "got", "went", "made", "saw", "said", "thought", "knew", "took",
    "came", "found", "ran", "wrote", "broke", "gave", "sent", "told", "left", "kept", "built",
    "bought", "brought", "caught", "chose", "drove", "fell", "felt", "forgot", "held", "lost",
    "meant", "met", "paid", "sat", "spent", "stood", "understood", "won", "began", "became", "drew",
    "grew", "hid", "rode", "rose", "shook", "spoke", "stole", "swore", "threw", "woke", "wore",
];

/// Verbs of a habit or convention after "we", without "always"/"never": "we use …", "we deploy
/// …", "we pin …" (present tense; "we need to …", "we should …" are plans, not habits).
pub(super) const HABIT_VERBS: &[&str] = &[
    "use", "deploy", "release", "ship", "run", "require", "follow", "keep", "store", "host", "pin",
    "squash", "squash-merge", "rebase", "bill", "support", "target", "avoid", "write", "name",
    "review", "tag", "merge", "prefer", "work", "build", "publish", "cut", "document", "format",
    "lint", "vendor", "own", "test", "track", "version", "enforce", "allow", "forbid", "treat",
    "rotate", "backport", "rely", "measure", "charge", "encrypt", "commit", "sign", "maintain",
    "schedule", "log",
];

/// Finite verbs a clause may rest on.
pub(super) const AUXILIARIES: &[&str] = &[
    "is", "are", "was", "were", "am", "isn't", "aren't", "wasn't", "weren't", "has", "have", "had",
    "hasn't", "haven't", "can", "cannot", "can't", "could", "must", "mustn't", "should",
    "shouldn't", "will", "won't", "would", "do", "does", "did", "don't", "doesn't", "didn't",
    "never", "always", "need", "needs", "may", "might", "shall", "live", "lives",
];

/// Verbs a statement may open with as an instruction: "remember: use tabs".
pub(super) const IMPERATIVES: &[&str] = &[
    "use", "prefer", "keep", "run", "write", "put", "ask", "check",
];

/// What a preference that is a choice opens with: "I prefer this", "I like your version".
pub(super) const CHOICE: &[&str] = &[
    "this", "that", "these", "those", "it", "which", "what", "either", "neither", "both", "yours",
    "your", "one", "how", "where", "option",
];

/// Roles and backgrounds: "I'm the backend lead", "I'm a Python person".
pub(super) const ROLES: &[&str] = &[
    "engineer", "developer", "dev", "designer", "scientist", "researcher", "manager", "pm",
    "architect", "student", "analyst", "programmer", "founder", "cofounder", "maintainer", "owner",
    "sre", "admin", "administrator", "lead", "head", "cto", "ceo", "vp", "director", "intern",
    "contractor", "consultant", "freelancer", "tester", "qa", "devops", "writer", "editor",
    "reviewer", "professor", "teacher", "hobbyist", "beginner", "novice", "expert", "specialist",
    "person", "member", "contributor", "committer", "operator", "officer", "chief", "principal",
    "fan",
];

/// Words that carry no content of their own.
pub(super) const FUNCTION_WORDS: &[&str] = &[
    "the", "a", "an", "and", "or", "to", "of", "in", "on", "for", "with", "we", "i", "you", "it",
    "is", "are", "be", "that", "this", "these", "those", "our", "my", "your", "do", "don't", "not",
    "never", "always", "please", "just", "again", "ever", "so", "at", "as", "by", "me", "us",
    "they", "them", "there", "here", "what", "will", "would", "can", "could", "should", "must",
    "was", "were", "has", "have", "had", "been", "being", "if", "when", "then", "than", "also",
    "too", "very", "really", "about", "up", "down", "out", "one", "ok", "okay", "i'm", "it's",
    "that's", "let's", "any", "all", "some", "more", "get", "got", "does", "did", "doing", "dont",
    "anymore", "now", "it'll", "you're", "we're", "i'll", "i've", "i'd", "from", "into", "but",
    "didn't", "doesn't", "won't", "wouldn't", "isn't", "aren't", "not",
];

/// How the speaker states a standing preference.
pub(super) const PREFERENCES: &[&str] = &[
    "i prefer", "i'd prefer", "i would prefer", "i'd rather", "i would rather", "i really prefer",
    "i generally prefer", "i usually prefer", "i always prefer", "i much prefer", "i like it when",
    "i love it when", "i hate it when", "i hate when", "i like", "i really like", "i don't like",
    "i do not like", "i dislike", "i can't stand", "i cannot stand", "i want you to always",
    "i want you to never", "i'd like you to always", "i'd like you to never", "i always want",
    "i never want", "i don't want you to", "i do not want you to",
];

/// How the speaker says what they work on, own or are.
pub(super) const WORK: &[&str] = &[
    "i work on", "i work at", "i work in", "i work for", "i work with", "i mostly work",
    "i mainly work", "i usually work", "i primarily work", "i maintain", "i own", "i lead",
    "i manage", "i'm responsible for", "i am responsible for", "i'm in charge of",
    "i am in charge of", "my role is", "my job is", "my title is", "i'm based in", "i am based in",
    "my name is", "i go by",
];

/// After "I'm": what the speaker knows or does not.
pub(super) const BACKGROUNDS: &[&str] = &[
    "new to", "new here", "familiar with", "very familiar with", "not familiar with",
    "unfamiliar with", "an expert in", "experienced with", "experienced in", "comfortable with",
    "fluent in",
    "proficient in",
];

/// Openings of a hypothetical or counterfactual: nothing in it is so.
pub(super) const HYPOTHETICAL: &[&str] = &[
    "what if", "suppose", "supposing", "imagine", "hypothetically", "let's say", "lets say",
    "let's pretend", "let's imagine", "let's assume", "let us assume", "let's suppose", "pretend",
    "say we", "say you", "assume", "assuming", "in theory", "theoretically", "in a world where",
    "would it", "wouldn't it", "what would",
];

/// What a request that introduces a list asks to keep: "Remember the following:".
pub(super) const LISTS: &[&str] = &[
    "", "the following", "these", "these things", "this", "a few things", "some things",
    "a couple of things", "the following things",
];

/// Where a request says its statement holds: "remember for next time: …".
pub(super) const SCOPES: &[&str] = &[
    "for future reference", "for the future", "for future sessions", "for the next sessions",
    "for the next session", "for next sessions", "for next session", "for next time", "for later",
    "going forward", "from now on",
];

/// What may stand between "remember" and the colon of an announced statement: "remember this
/// for next time: …".
pub(super) const ANNOUNCING: &[&str] = &[
    "this", "these", "the", "that", "following", "one", "for", "next", "time", "later", "future",
    "going", "forward", "please", "too", "as", "well",
];

/// Laughing or grumbling: the sentence is chatter ("we always seem to break the build lol").
pub(super) const CHATTER: &[&str] = &[
    "lol", "haha", "hahaha", "lmao", "rofl", "ugh", "omg", "jk", "smh", "meh",
];

/// What follows "the"/"your" in a choice among what is on screen: "I prefer the first one".
pub(super) const ON_SCREEN: &[&str] = &[
    "first", "second", "third", "last", "other", "former", "latter", "option", "version", "one",
    "new", "old", "original",
];

/// What "the last …" names when it is what just happened: "the last commit", "the previous run".
pub(super) const RECENT: &[&str] = &[
    "commit", "pr", "run", "build", "message", "change", "changes", "session", "time", "push",
    "deploy", "release", "step", "answer",
];

/// Adverbs that may stand between a marker and its verb ("never just retry", "I work mostly on").
pub(super) const ADVERBS: &[&str] = &[
    "just", "ever", "even", "really", "actually", "also", "still", "mostly", "mainly", "primarily",
    "basically", "usually", "generally", "officially", "technically", "quite", "very",
];

/// Openings of a reminder meant for the person, not the agent.
pub(super) const FOR_THE_PERSON: &[&str] = &[
    "remind me", "don't let me forget", "do not let me forget", "note to self", "make sure i ",
    "make sure that i ",
];

/// Forms of "be", "have" and "can" a standing fact may rest on: "our API is versioned in the
/// path", "users can have several workspaces".
pub(super) const STANDING_COPULAS: &[&str] = &[
    "is", "are", "isn't", "aren't", "has", "have", "can", "cannot", "can't", "doesn't", "don't",
];

/// Verbs of how things stand, in their base form: "staging lives in eu-west-1", "prod deploys
/// go through ArgoCD", "payments belongs to billing".
pub(super) const STANDING_VERBS: &[&str] = &[
    "live", "go", "belong", "use", "support", "need", "require", "expect", "depend", "rely",
    "point", "default", "sit", "come", "talk", "store", "own", "handle", "contain", "hold",
    "include", "cover", "expire", "rotate", "deploy", "ship", "map", "follow", "mean", "cost",
    "accept", "allow", "target", "publish", "sync", "route", "run", "host", "serve", "speak",
    "cap", "limit", "mirror", "wrap", "extend", "inherit", "read", "write", "send", "receive",
    "expose", "share", "release", "land", "call",
];

/// Verbs that report what was seen rather than how things stand: "every request times out",
/// "the function returns null".
pub(super) const OBSERVED: &[&str] = &[
    "fail", "crash", "hang", "break", "time", "error", "throw", "return", "show", "look", "seem",
    "appear", "take", "work", "load", "happen", "stop", "keep", "get", "feel", "sound", "pass",
    "complain", "hit", "print", "say", "give", "make",
];

/// What a statement may say a thing is that is the state of the moment, or a judgement of it:
/// "our staging is down", "the timestamps are off by one hour", "my branch is behind main".
pub(super) const STATES: &[&str] = &[
    "broken", "failing", "down", "slow", "wrong", "off", "missing", "undefined", "null", "nil",
    "empty", "stuck", "weird", "strange", "odd", "fixed", "done", "ready", "merged", "gone", "red",
    "green", "different", "out", "behind", "ahead", "outdated", "stale", "corrupted", "corrupt",
    "busy", "dead", "back", "unreachable", "unavailable", "blocked", "flaky", "fine", "ok",
    "okay", "good", "bad", "better", "worse", "messy", "mess", "confusing", "annoying", "huge",
    "correct", "right", "close", "almost", "nearly", "finished", "up", "changed", "updated",
    "deleted", "removed", "reverted", "renamed", "moved", "failed", "crashed", "full",
    "late", "early", "over", "cleaner", "nicer", "faster", "slower", "simpler", "clearer",
    "similar", "same", "there", "here", "still", "again", "interesting", "great",
    "awesome", "terrible", "awful", "nice", "cool", "fun", "hard", "easy", "tricky", "tired",
    "sorry", "sure", "not", "like", "too", "already", "much", "way", "pretty", "super", "kinda",
];

/// Words of a guess or an impression: nothing in the sentence is known to be so.
pub(super) const GUESSES: &[&str] = &[
    "probably", "maybe", "perhaps", "likely", "unlikely", "apparently", "seemingly",
    "supposedly", "presumably", "possibly", "guess", "think", "suspect", "wonder", "seems",
    "looks", "might", "may", "could", "would", "should", "confused", "unsure", "wondering",
    "somehow", "weirdly", "oddly", "strangely", "suddenly", "randomly",
];

/// Numbers as words: "two runs with the same seed gave …" counts things seen, it names no kind;
/// "we have three environments" counts what the team has.
pub(super) const NUMBERS: &[&str] = &[
    "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
    "twelve",
];

/// Subjects that are a trouble or a thing of the work and the conversation, never a standing
/// fact's: "the bug is in the parser", "our problem is the cache", "my plan is to split it".
pub(super) const TROUBLES: &[&str] = &[
    "bug", "bugs", "error", "errors", "issue", "issues", "problem", "problems", "output",
    "result", "results", "fix", "crash", "failure", "failures", "exception", "warning",
    "warnings", "variable", "value", "line", "function", "method", "call", "request", "requests",
    "response", "query", "change", "changes", "commit", "pr", "diff", "patch", "page", "button",
    "component", "screen", "form", "field", "loop", "job", "step", "thing", "things", "stuff",
    "question", "answer", "plan", "idea", "goal", "guess", "point", "reason", "approach",
    "option", "solution", "way", "trick", "deadline", "task", "ticket", "meeting", "demo",
    "mistake", "fault", "concern", "worry", "understanding", "take", "feeling", "hunch", "theory",
    "hope", "suggestion", "proposal", "attempt", "draft", "copy", "message", "messages",
];

/// What "my …" may name that is the speaker's standing attribute: "my timezone is CET", "my
/// editor is Neovim".
pub(super) const PROFILE: &[&str] = &[
    "timezone", "tz", "zone", "name", "pronouns", "email", "handle", "username", "editor", "ide",
    "shell", "terminal", "os", "machine", "laptop", "setup", "keyboard", "layout", "hours",
    "location", "background", "language", "stack", "team", "manager", "boss", "lead", "role",
    "title", "job", "distro", "browser", "font",
];

/// Words that point at something said or shown elsewhere: no subject of a standing fact.
pub(super) const POINTERS: &[&str] = &[
    "this", "that", "these", "those", "it", "they", "them", "here", "there", "what", "which",
    "who", "where", "when", "why", "how", "something", "anything", "everything",
];

/// Prepositions that end a subject's head ("alerts for the android app").
pub(super) const PREPOSITIONS: &[&str] = &[
    "for", "in", "of", "on", "at", "from", "with", "to", "under", "behind", "inside", "per",
    "into", "by", "via", "through", "across", "within", "between", "as",
];
