; Scopes and definitions for Chronon: blocks, units, systems and functions
; open scopes; declarations define names that identifiers refer to.

[
  (source_file)
  (unit_body)
  (system_body)
  (system_for)
  (function_declaration)
  (block)
  (for_statement)
  (match_arm)
  (if_statement)
] @local.scope

(const_declaration name: (identifier) @local.definition.constant)
(clock_declaration name: (identifier) @local.definition.constant)
(struct_declaration name: (identifier) @local.definition.type)
(enum_declaration name: (identifier) @local.definition.type)
(unit_declaration name: (identifier) @local.definition.type)
(system_declaration name: (identifier) @local.definition.type)
(function_declaration name: (identifier) @local.definition.function)
(parameter name: (identifier) @local.definition.parameter)
(generic_parameter name: (identifier) @local.definition.parameter)
(port_declaration name: (identifier) @local.definition.field)
(register_declaration name: (identifier) @local.definition.field)
(stage_declaration name: (identifier) @local.definition.field)
(counter_declaration name: (identifier) @local.definition.field)
(instance_declaration name: (identifier) @local.definition.var)
(let_statement name: (identifier) @local.definition.var)
(for_statement variable: (identifier) @local.definition.var)
(system_for variable: (identifier) @local.definition.var)
(let_condition pattern: (some_pattern (identifier) @local.definition.var))

(identifier) @local.reference
