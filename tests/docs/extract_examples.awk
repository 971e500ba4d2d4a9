# Turns the examples of one document into a bash script that runs them
# (tests/docs/examples_test.sh runs it; docs/development.md describes the
# form of an example).
#
# Input: a markdown file (format=markdown) or the output of
# `gantry COMMAND --help` (format=help). Variables: format, name (the
# document's name in messages), expected_dir (where each example's expected
# output goes).
#
# An example is a command line `$ CMD` (continued by lines after a trailing
# backslash) and the lines after it up to the next command or the end of its
# block: its expected output. In markdown a block is a fenced or an indented
# code block; in --help it is the section from `Examples:` to the first empty
# line, each line indented by two spaces. In markdown, the comment
#     <!-- example: not run: REASON -->
# on the line before a block (blank lines between allowed) marks every
# example of the block as not run, for REASON, and
#     <!-- example: setup: CMD -->
# runs CMD (hidden from the reader, its output discarded, its exit status 0)
# where it stands: to make the state the next examples show (jobs that run),
# and
#     <!-- example: file: NAME -->
# before a block makes the block (all of it) the content of the executable
# file NAME in the examples' directory, for the examples after it.
#
# For each example the script calls
#     __example NAME:LINE EXIT EXPECTED_FILE|-
# then runs CMD in the shell's own context (variables, cd and exports carry
# over to the next example of the document) with its output in "$__out", then
# calls `__check $?`. EXIT is the N of a trailing comment `# exit N` (which
# may go on: `# exit 1: not running`), else 0.

function shell_quote(s) {
    gsub(/'/, "'\\''", s)
    return "'" s "'"
}

function flush_example(    exit_code, last, n) {
    if (command == "")
        return
    n = ++count
    if (skip_reason != "") {
        print "__skip " shell_quote(name ":" command_line) " " shell_quote(skip_reason)
    } else {
        exit_code = 0
        last = command
        sub(/.*\n/, "", last)
        if (match(last, /#[ \t]*exit [0-9]+([:;,. ].*)?$/)) {
            exit_code = substr(last, RSTART, RLENGTH)
            sub(/#[ \t]*exit /, "", exit_code)
            sub(/[^0-9].*$/, "", exit_code)
        }
        file = "-"
        if (expected != "") {
            file = expected_dir "/" n
            printf "%s", expected > file
            close(file)
        }
        print "__example " shell_quote(name ":" command_line) " " exit_code " " shell_quote(file)
        print "{ " command
        print "} >\"$__out\" 2>&1 </dev/null"
        print "__check $?"
    }
    command = ""
    expected = ""
    continued = 0
}

function end_block() {
    flush_example()
    skip_reason = ""
    in_block = 0
}

# One line of a block, without the block's indentation.
function block_line(text) {
    if (continued) {
        command = command "\n" text
        continued = (text ~ /\\$/)
    } else if (text ~ /^\$ /) {
        flush_example()
        command = substr(text, 3)
        command_line = NR
        continued = (text ~ /\\$/)
    } else if (command != "") {
        expected = expected text "\n"
    }
}

# The end of a block that is a file's content.
function end_file(    path) {
    sub(/\n+$/, "\n", file_text)
    path = expected_dir "/file." NR
    printf "%s", file_text > path
    close(path)
    print "cp " shell_quote(path) " " shell_quote(file_name) " && chmod +x " shell_quote(file_name)
    file_name = ""
    file_text = ""
}

BEGIN {
    count = 0
    in_block = 0
    in_fence = 0
    in_examples = 0
    skip_reason = ""
    pending_skip = ""
}

format == "help" {
    if ($0 == "Examples:") {
        in_examples = 1
        next
    }
    if (!in_examples)
        next
    if ($0 == "") {
        end_block()
        in_examples = 0
        next
    }
    block_line(substr($0, 3))
    next
}

# Markdown from here on.
in_fence {
    if ($0 ~ /^[ \t]*```/) {
        end_block()
        in_fence = 0
    } else {
        block_line($0)
    }
    next
}

/^[ \t]*```/ {
    in_fence = 1
    in_block = 1
    skip_reason = pending_skip
    pending_skip = ""
    next
}

/^<!-- example: file: .* -->[ \t]*$/ {
    pending_file = $0
    sub(/^<!-- example: file: /, "", pending_file)
    sub(/ -->[ \t]*$/, "", pending_file)
    next
}

/^<!-- example: setup: .* -->[ \t]*$/ {
    setup = $0
    sub(/^<!-- example: setup: /, "", setup)
    sub(/ -->[ \t]*$/, "", setup)
    print "__setup " shell_quote(name ":" NR) " " shell_quote(setup)
    next
}

/^<!-- example: not run: .* -->[ \t]*$/ {
    pending_skip = $0
    sub(/^<!-- example: not run: /, "", pending_skip)
    sub(/ -->[ \t]*$/, "", pending_skip)
    next
}

file_name != "" && /^(    |[ \t]*$)/ {
    file_text = file_text substr($0, 5) "\n"
    next
}

file_name != "" {
    end_file()
}

pending_file != "" && /^    / {
    file_name = pending_file
    pending_file = ""
    file_text = substr($0, 5) "\n"
    next
}

/^    / {
    if (!in_block) {
        in_block = 1
        skip_reason = pending_skip
        pending_skip = ""
    }
    block_line(substr($0, 5))
    next
}

/^[ \t]*$/ {
    # A blank line inside an indented block ends the current example's output
    # but not the block.
    if (in_block)
        flush_example()
    next
}

{
    if (in_block)
        end_block()
    pending_skip = ""
}

END {
    if (file_name != "")
        end_file()
    end_block()
}
