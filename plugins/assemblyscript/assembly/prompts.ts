// The prompts this plugin offers, and how each is rendered.

/** A prompt argument; choices, when set, are what completion offers. */
export class Argument {
  constructor(
    public name: string,
    public description: string,
    public required: bool,
    public choices: string[],
    /** Only one of choices is accepted (compared case-insensitively). */
    public strict: bool,
  ) {}
}

export class Prompt {
  constructor(
    public name: string,
    public title: string,
    public description: string,
    public args: Argument[],
  ) {}

  arg(name: string): Argument | null {
    for (let i = 0; i < this.args.length; i++) {
      if (this.args[i].name == name) return this.args[i];
    }
    return null;
  }
}

const LANGUAGES: string[] = [
  "Arabic", "Bengali", "Chinese (Simplified)", "Chinese (Traditional)", "Czech", "Danish", "Dutch",
  "English", "Finnish", "French", "German", "Greek", "Hebrew", "Hindi", "Hungarian", "Indonesian",
  "Italian", "Japanese", "Korean", "Norwegian", "Persian", "Polish", "Portuguese", "Romanian",
  "Russian", "Spanish", "Swahili", "Swedish", "Thai", "Turkish", "Ukrainian", "Vietnamese",
];

const REGISTERS: string[] = ["formal", "informal", "neutral"];

const PROGRAMMING_LANGUAGES: string[] = [
  "AssemblyScript", "Bash", "C", "C#", "C++", "Go", "Haskell", "Java", "JavaScript", "Kotlin", "Lua",
  "OCaml", "PHP", "Python", "Ruby", "Rust", "Scala", "SQL", "Swift", "TypeScript", "WAT", "Zig",
];

const LEVELS: string[] = ["beginner", "intermediate", "expert"];

export const PROMPTS: Prompt[] = [
  new Prompt("translate", "Translate",
    "Asks the model to translate a text into another language, in a formal, informal or neutral register.", [
      new Argument("text", "The text to translate.", true, [], false),
      new Argument("language", "The language to translate into (default English). Completion suggests languages.", false, LANGUAGES, false),
      new Argument("register", "formal, informal or neutral (default neutral).", false, REGISTERS, true),
    ]),
  new Prompt("explain_code", "Explain code",
    "Asks the model to explain a piece of code to a reader of a given level.", [
      new Argument("code", "The code to explain.", true, [], false),
      new Argument("language", "The programming language of the code (optional). Completion suggests languages.", false, PROGRAMMING_LANGUAGES, false),
      new Argument("level", "The reader: beginner, intermediate or expert (default intermediate).", false, LEVELS, true),
    ]),
];

export function findPrompt(name: string): Prompt | null {
  for (let i = 0; i < PROMPTS.length; i++) {
    if (PROMPTS[i].name == name) return PROMPTS[i];
  }
  return null;
}

/**
 * The choices of a that match the typed value: those starting with it
 * (case-insensitively) first, then those containing it elsewhere.
 */
export function completions(a: Argument, value: string): string[] {
  const v = value.toLowerCase();
  const starts: string[] = [];
  const contains: string[] = [];
  for (let i = 0; i < a.choices.length; i++) {
    const c = a.choices[i];
    const at = c.toLowerCase().indexOf(v);
    if (at == 0) starts.push(c);
    else if (at > 0) contains.push(c);
  }
  return starts.concat(contains);
}

/** The choice of a equal to value ignoring case, or null. */
export function canonical(a: Argument, value: string): string | null {
  const v = value.toLowerCase();
  for (let i = 0; i < a.choices.length; i++) {
    if (a.choices[i].toLowerCase() == v) return a.choices[i];
  }
  return null;
}

/** A rendered prompt: its description and the text of its one user message. */
export class Rendered {
  constructor(public description: string, public text: string) {}
}

/**
 * Renders prompt p with its argument values (vals[i] for p.args[i]: "" when
 * absent; strict ones already canonical).
 */
export function render(p: Prompt, vals: string[]): Rendered {
  if (p.name == "translate") {
    const language = vals[1].length > 0 ? vals[1] : "English";
    const register = vals[2].length > 0 ? vals[2] : "neutral";
    return new Rendered(
      "Translate into " + language + " (" + register + ")",
      "Translate the following text into " + language + ", in a " + register +
        " register. Keep its meaning, tone and formatting, and reply with the translation only.\n\n" + vals[0],
    );
  }
  // explain_code
  const language = vals[1];
  const level = vals[2].length > 0 ? vals[2] : "intermediate";
  let how: string;
  if (level == "beginner") {
    how = "The reader is a beginner: explain each construct step by step and define the terms you use.";
  } else if (level == "expert") {
    how = "The reader is an expert: summarize what the code does in a few sentences, then point out anything subtle, surprising or wrong.";
  } else {
    how = "The reader programs but may not know this language well: explain what the code does and the idioms it uses.";
  }
  const fence = fenceFor(vals[0]);
  return new Rendered(
    "Explain " + (language.length > 0 ? language + " code" : "code") + " to a reader of " + level + " level",
    "Explain the following " + (language.length > 0 ? language + " " : "") + "code. " + how + "\n\n" +
      fence + tagFor(language) + "\n" + vals[0] + "\n" + fence,
  );
}

/** A Markdown fence longer than any run of backticks in code. */
function fenceFor(code: string): string {
  let longest = 0;
  let run = 0;
  for (let i = 0; i < code.length; i++) {
    if (code.charCodeAt(i) == 0x60) {
      run++;
      if (run > longest) longest = run;
    } else {
      run = 0;
    }
  }
  return "`".repeat(longest >= 3 ? longest + 1 : 3);
}

/** The Markdown info string for a language: lower case, only [a-z0-9+#._-]. */
function tagFor(language: string): string {
  const l = language.toLowerCase();
  let tag = "";
  for (let i = 0; i < l.length; i++) {
    const c = l.charCodeAt(i);
    if ((c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39) || c == 0x2b || c == 0x23 || c == 0x2e || c == 0x5f || c == 0x2d) {
      tag += String.fromCharCode(c);
    }
  }
  return tag;
}
