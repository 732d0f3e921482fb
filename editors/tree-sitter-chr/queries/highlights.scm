; Chronon highlights. Every keyword of the language is listed here once;
; tests/editors.rs checks the list against the compiler's grammar.

(line_comment) @comment
(block_comment) @comment

(string_literal) @string
(escape_sequence) @string.escape
(integer_literal) @number
(time_value) @number
(time_unit) @constant.builtin
(boolean_literal) @boolean
"None" @constant.builtin

(primitive_type) @type.builtin
(integer_sign) @type.builtin
(type_identifier) @type
(enum_variant) @constant
(scoped_identifier
  scope: (identifier) @type
  name: (identifier) @constant)

(unit_declaration name: (identifier) @type)
(system_declaration name: (identifier) @type)
(struct_declaration name: (identifier) @type)
(enum_declaration name: (identifier) @type)
(function_declaration name: (identifier) @function)
(clock_declaration name: (identifier) @constant)
(const_declaration name: (identifier) @constant)
(generic_parameter name: (identifier) @variable.parameter)
(generic_argument name: (identifier) @variable.parameter)
(parameter name: (identifier) @variable.parameter)
(field_declaration name: (identifier) @property)
(field_initializer name: (identifier) @property)
(field_expression field: (identifier) @property)
(named_argument name: (identifier) @variable.parameter)
(port_declaration name: (identifier) @variable.member)
(register_declaration name: (identifier) @variable.member)
(stage_declaration name: (identifier) @variable.member)
(counter_declaration name: (identifier) @variable.member)
(instance_declaration name: (identifier) @variable)
(port_reference port: (identifier) @variable.member)
(register_write target: (identifier) @variable.member)

(call_expression
  function: (identifier) @function.call)
(call_expression
  function: (field_expression field: (identifier) @function.method.call))

[
  "use"
  "const"
  "clock"
  "struct"
  "enum"
  "fn"
  "unit"
  "system"
  "reg"
  "stage"
  "counter"
  "inst"
  "let"
] @keyword

[
  "tick"
  "if"
  "else"
  "match"
  "for"
  "while"
  "max"
  "return"
  "finish"
] @keyword.control

[
  "in"
  "out"
  "cdc"
  "fwft"
  "rate"
  "pipes"
  "phase"
  "on"
  "connect"
  "latency"
  "capacity"
  "depth"
  "sync"
] @keyword.modifier

"as" @keyword.operator

[
  "assert"
  "trace"
] @function.builtin

[
  "true"
  "false"
] @boolean

"Some" @constructor

[
  "->"
  "=>"
  "=="
  "!="
  "<"
  "<="
  ">"
  ">="
  "&&"
  "||"
  "!"
  "~"
  "&"
  "|"
  "^"
  "<<"
  ">>"
  "+"
  "-"
  "*"
  "/"
  "%"
  "="
  "+="
  "-="
  ".."
  "..="
  "+:"
  "-:"
] @operator

; A slice's `:` is an operator there (`x[7:0]`).
(slice_expression ":" @operator)

; After the general operators: a register write's `<=` is not a comparison.
(register_write "<=" @operator.register)

[
  ";"
  ","
  ":"
  "::"
  "."
] @punctuation.delimiter

[
  "("
  ")"
  "["
  "]"
  "{"
  "}"
] @punctuation.bracket
