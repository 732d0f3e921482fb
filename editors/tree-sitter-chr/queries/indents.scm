; Indentation for Chronon: one level inside every bracketed body, as
; `chronc fmt` writes it.

[
  (unit_body)
  (system_body)
  (system_for)
  (block)
  (match_statement)
  (struct_declaration)
  (enum_declaration)
  (clock_list)
  (arguments)
  (parameters)
  (array_expression)
  (struct_expression)
  (generic_parameters)
] @indent.begin

[
  "}"
  ")"
  "]"
] @indent.branch @indent.end

[
  (line_comment)
  (block_comment)
] @indent.auto

(string_literal) @indent.ignore
