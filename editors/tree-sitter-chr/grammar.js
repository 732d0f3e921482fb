/**
 * Tree-sitter grammar for Chronon (.chr) designs; follows docs/language.md.
 * Keywords are the identifier-like strings below; tests/editors.rs checks
 * them against the pest grammar's `keyword` rule.
 */

/** Frequency and period units of time literals: contextual words, not keywords. */
const TIME_UNITS = ['Hz', 'kHz', 'MHz', 'GHz', 'fs', 'ps', 'ns', 'us', 'ms', 's'];

const PREC = {
  range: 1,
  or: 2,
  and: 3,
  compare: 4,
  bitor: 5,
  bitxor: 6,
  bitand: 7,
  shift: 8,
  add: 9,
  mul: 10,
  cast: 11,
  unary: 12,
  postfix: 13,
  register_write: 20,
};

const sep1 = (rule, separator) => seq(rule, repeat(seq(separator, rule)));
const commaSep = (rule) => optional(seq(sep1(rule, ','), optional(',')));
const commaSep1 = (rule) => seq(sep1(rule, ','), optional(','));

module.exports = grammar({
  name: 'chr',

  word: ($) => $.identifier,

  extras: ($) => [/\s/, $.line_comment, $.block_comment],

  // Block comments nest, which a regular expression cannot count.
  externals: ($) => [$.block_comment],

  conflicts: ($) => [
    // `if x {` and `match x {` open a block, not a struct literal.
    [$._expression, $.struct_expression],
  ],

  supertypes: ($) => [$._expression, $._item],

  rules: {
    source_file: ($) => repeat($._item),

    _item: ($) =>
      choice(
        $.use_declaration,
        $.const_declaration,
        $.clock_declaration,
        $.struct_declaration,
        $.enum_declaration,
        $.function_declaration,
        $.unit_declaration,
        $.system_declaration,
      ),

    line_comment: (_) => token(seq('//', /[^\n]*/)),

    use_declaration: ($) => seq('use', field('path', $.path), ';'),

    path: ($) => sep1($.identifier, '::'),

    const_declaration: ($) =>
      seq('const', field('name', $.identifier), ':', field('type', $._type), '=', field('value', $._expression), ';'),

    // --- clocks ---

    clock_declaration: ($) =>
      seq(
        'clock',
        field('name', $.identifier),
        optional(seq('[', field('size', $._expression), ']')),
        '=',
        choice($.clock_spec, $.clock_list),
        ';',
      ),

    clock_list: ($) => seq('[', commaSep1($.clock_spec), ']'),

    clock_spec: ($) => seq(field('rate', $.time_literal), optional(seq('phase', field('phase', $.time_literal)))),

    time_literal: ($) => seq(field('value', $.time_value), field('unit', $.time_unit)),

    time_value: (_) => token(seq(/\d[\d_]*(\.\d[\d_]*)?/, optional(seq(/\s*\/\s*/, /\d[\d_]*/)))),

    time_unit: (_) => choice(...TIME_UNITS),

    // --- types, structs, enums, functions ---

    _type: ($) =>
      choice($.primitive_type, $.sized_integer_type, $.generic_type, $._type_identifier, $.scoped_identifier, $.array_type),

    // A generic struct with its arguments: `Pair<T = u8, N = 4>`.
    generic_type: ($) =>
      prec(1, seq(field('name', choice($._type_identifier, $.scoped_identifier)), field('arguments', $.generic_arguments))),

    // `u<W>`, `i<(W * 2)>`: a width from a constant. The sign and `<` are
    // one token, so `i` stays a name where a type may also stand
    // (`ID = i as u8` in a parameter value).
    sized_integer_type: ($) =>
      seq(
        field('sign', alias(token(prec(1, /[ui]</)), $.integer_sign)),
        field('width', choice($.integer_literal, $.identifier, $.parenthesized_expression)),
        '>',
      ),

    _type_identifier: ($) => alias($.identifier, $.type_identifier),

    primitive_type: (_) => token(prec(1, /bool|[ui][0-9]+/)),

    array_type: ($) => seq('[', field('element', $._type), ';', field('length', $._expression), ']'),

    struct_declaration: ($) =>
      seq(
        'struct',
        field('name', $.identifier),
        optional(field('parameters', $.generic_parameters)),
        '{',
        commaSep($.field_declaration),
        '}',
      ),

    field_declaration: ($) => seq(field('name', $.identifier), ':', field('type', $._type)),

    enum_declaration: ($) => seq('enum', field('name', $.identifier), '{', commaSep($.enum_variant), '}'),

    enum_variant: ($) => $.identifier,

    function_declaration: ($) =>
      seq(
        'fn',
        field('name', $.identifier),
        optional(field('generics', $.generic_parameters)),
        field('parameters', $.parameters),
        optional(seq('->', field('return_type', $._type))),
        field('body', $.block),
      ),

    parameters: ($) => seq('(', commaSep($.parameter), ')'),

    parameter: ($) => seq(field('name', $.identifier), ':', field('type', $._type)),

    generic_parameters: ($) => seq('<', commaSep1($.generic_parameter), '>'),

    generic_parameter: ($) =>
      seq(
        field('name', $.identifier),
        ':',
        field('type', $._type),
        optional(seq('=', field('default', choice($.sized_integer_type, $._argument_value)))),
      ),

    generic_arguments: ($) => seq('<', commaSep1($.generic_argument), '>'),

    // A type that is not also an expression (`T = u<W>`) stands as itself.
    generic_argument: ($) =>
      seq(field('name', $.identifier), '=', field('value', choice($.sized_integer_type, $._argument_value))),

    // As the pest grammar's `arg_expr`: a parameter value stops at `>`, so it
    // takes casts and the bitwise and arithmetic operators but no comparison,
    // shift or logical operator (those need parentheses).
    _argument_value: ($) =>
      choice(
        $._simple_expression,
        alias($.argument_binary_expression, $.binary_expression),
        alias($.argument_cast_expression, $.cast_expression),
      ),

    argument_binary_expression: ($) => {
      const table = [
        [PREC.bitor, '|'],
        [PREC.bitxor, '^'],
        [PREC.bitand, '&'],
        [PREC.add, choice('+', '-')],
        [PREC.mul, choice('*', '/', '%')],
      ];
      return choice(
        ...table.map(([precedence, operator]) =>
          prec.left(precedence, seq(field('left', $._argument_value), field('operator', operator), field('right', $._argument_value))),
        ),
      );
    },

    argument_cast_expression: ($) => prec.left(PREC.cast, seq(field('value', $._argument_value), 'as', field('type', $._type))),

    // Parameter values stop at `>`; anything with operators needs parentheses.
    _simple_expression: ($) =>
      choice($.integer_literal, $.boolean_literal, $.identifier, $.parenthesized_expression, $.scoped_identifier, alias($.negative_literal, $.unary_expression)),

    negative_literal: ($) => seq('-', $.integer_literal),

    // --- units ---

    unit_declaration: ($) =>
      seq('unit', field('name', $.identifier), optional(field('parameters', $.generic_parameters)), field('body', $.unit_body)),

    unit_body: ($) => seq('{', repeat($._unit_member), '}'),

    _unit_member: ($) =>
      choice($.port_declaration, $.register_declaration, $.stage_declaration, $.counter_declaration, $.tick_block),

    port_declaration: ($) =>
      seq(
        field('direction', choice('in', 'out')),
        field('name', $.identifier),
        optional(seq('[', field('length', $._expression), ']')),
        ':',
        field('type', $._type),
        repeat(choice('cdc', 'fwft', seq('rate', field('rate', $._expression)))),
        optional(seq('=', field('inner', $.port_reference))),
        ';',
      ),

    register_declaration: ($) =>
      seq('reg', field('name', $.identifier), ':', field('type', $._type), optional(seq('=', field('value', $._expression))), ';'),

    stage_declaration: ($) =>
      seq('stage', field('name', $.identifier), ':', field('type', $._type), optional(seq('pipes', field('pipes', $._expression))), ';'),

    counter_declaration: ($) => seq('counter', field('name', $.identifier), ';'),

    tick_block: ($) => seq('tick', field('body', $.block)),

    // --- systems ---

    system_declaration: ($) =>
      seq('system', field('name', $.identifier), optional(field('parameters', $.generic_parameters)), field('body', $.system_body)),

    system_body: ($) => seq('{', repeat($._system_member), '}'),

    _system_member: ($) =>
      choice($.port_declaration, $.instance_declaration, $.connect_declaration, $.cdc_declaration, $.system_for, $.system_if),

    instance_declaration: ($) =>
      seq(
        'inst',
        field('name', $.identifier),
        optional(seq('[', field('index', $._expression), ']')),
        ':',
        field('design', choice($._type_identifier, $.scoped_identifier)),
        optional(field('arguments', $.generic_arguments)),
        optional(seq('on', field('clock', $.clock_reference))),
        ';',
      ),

    clock_reference: ($) => seq($.identifier, optional(seq('[', $._expression, ']'))),

    connect_declaration: ($) =>
      seq(
        'connect',
        field('from', $.port_reference),
        '->',
        field('to', $.port_reference),
        repeat(choice(seq('latency', field('latency', $._expression)), seq('capacity', field('capacity', $._expression)))),
        ';',
      ),

    cdc_declaration: ($) =>
      seq(
        'cdc',
        field('from', $.port_reference),
        '->',
        field('to', $.port_reference),
        repeat(choice(seq('depth', field('depth', $._expression)), seq('sync', field('sync', $._expression)))),
        ';',
      ),

    port_reference: ($) =>
      seq(
        field('instance', $.identifier),
        optional(seq('[', field('index', $._expression), ']')),
        '.',
        field('port', $.identifier),
        optional(seq('[', field('element', $._expression), ']')),
      ),

    system_for: ($) =>
      seq('for', field('variable', $.identifier), 'in', field('range', $.range_expression), '{', repeat($._system_member), '}'),

    // Conditional generate: members declared when a constant holds.
    system_if: ($) =>
      seq(
        'if',
        field('condition', $._expression),
        field('consequence', $.system_body),
        optional(seq('else', field('alternative', choice($.system_body, $.system_if)))),
      ),

    // --- statements ---

    block: ($) => seq('{', repeat($._statement), '}'),

    _statement: ($) =>
      choice(
        $.let_statement,
        $.assignment_statement,
        $.register_write,
        $.counter_increment,
        $.if_statement,
        $.match_statement,
        $.for_statement,
        $.while_statement,
        $.return_statement,
        $.finish_statement,
        $.expression_statement,
        $.block,
      ),

    let_statement: ($) =>
      seq('let', field('name', $.identifier), optional(seq(':', field('type', $._type))), '=', field('value', $._expression), ';'),

    assignment_statement: ($) => seq(field('target', $._expression), '=', field('value', $._expression), ';'),

    // At the start of a statement `<=` writes a register; in an expression it compares.
    register_write: ($) =>
      prec(PREC.register_write, seq(field('target', $._expression), '<=', field('value', $._expression), ';')),

    counter_increment: ($) => seq(field('counter', $._expression), choice('+=', '-='), field('value', $._expression), ';'),

    if_statement: ($) =>
      seq(
        'if',
        field('condition', choice($._expression, $.let_condition)),
        field('consequence', $.block),
        optional(seq('else', field('alternative', choice($.block, $.if_statement)))),
      ),

    let_condition: ($) => seq('let', field('pattern', $._pattern), '=', field('value', $._expression)),

    match_statement: ($) => seq('match', field('value', $._expression), '{', repeat($.match_arm), '}'),

    match_arm: ($) =>
      seq(
        field('pattern', $._pattern),
        '=>',
        choice(seq(field('body', $.block), optional(',')), seq(field('body', $._expression), optional(','))),
      ),

    for_statement: ($) =>
      seq(
        'for',
        field('variable', $.identifier),
        'in',
        field('range', $.range_expression),
        optional(seq('max', field('bound', $._expression))),
        field('body', $.block),
      ),

    // `max` is a word of loops only, not a keyword (a user's `fn max` works).
    while_statement: ($) =>
      seq('while', field('condition', $._expression), optional(seq('max', field('bound', $._expression))), field('body', $.block)),

    return_statement: ($) => seq('return', optional(field('value', $._expression)), ';'),

    finish_statement: (_) => seq('finish', ';'),

    expression_statement: ($) => seq($._expression, ';'),

    // --- patterns ---

    _pattern: ($) => choice($._single_pattern, $.or_pattern),

    or_pattern: ($) => seq($._single_pattern, repeat1(seq('|', $._single_pattern))),

    _single_pattern: ($) =>
      choice(
        $.integer_literal,
        alias($.negative_literal, $.unary_expression),
        $.boolean_literal,
        $.identifier,
        $.scoped_identifier,
        $.some_pattern,
        'None',
      ),

    some_pattern: ($) => seq('Some', '(', $._single_pattern, ')'),

    // --- expressions ---

    _expression: ($) =>
      choice(
        $.integer_literal,
        $.boolean_literal,
        $.string_literal,
        'None',
        $.identifier,
        $.scoped_identifier,
        $.unary_expression,
        $.binary_expression,
        $.cast_expression,
        $.field_expression,
        $.index_expression,
        $.slice_expression,
        $.concatenation_expression,
        $.replication_expression,
        $.call_expression,
        $.builtin_call,
        $.some_expression,
        $.parenthesized_expression,
        $.array_expression,
        $.struct_expression,
      ),

    range_expression: ($) => prec.left(PREC.range, seq(field('start', $._expression), choice('..', '..='), field('end', $._expression))),

    // `&x`, `|x` and `^x` are the bit reductions.
    unary_expression: ($) =>
      prec(PREC.unary, seq(field('operator', choice('-', '!', '~', '&', '|', '^')), field('operand', $._expression))),

    binary_expression: ($) => {
      const table = [
        [PREC.or, '||'],
        [PREC.and, '&&'],
        [PREC.compare, choice('==', '!=', '<', '<=', '>', '>=')],
        [PREC.bitor, '|'],
        [PREC.bitxor, '^'],
        [PREC.bitand, '&'],
        [PREC.shift, choice('<<', '>>')],
        [PREC.add, choice('+', '-')],
        [PREC.mul, choice('*', '/', '%')],
      ];
      return choice(
        ...table.map(([precedence, operator]) =>
          prec.left(precedence, seq(field('left', $._expression), field('operator', operator), field('right', $._expression))),
        ),
      );
    },

    cast_expression: ($) => prec.left(PREC.cast, seq(field('value', $._expression), 'as', field('type', $._type))),

    field_expression: ($) => prec(PREC.postfix, seq(field('value', $._expression), '.', field('field', $.identifier))),

    index_expression: ($) => prec(PREC.postfix, seq(field('value', $._expression), '[', field('index', $._expression), ']')),

    // `x[hi:lo]`, `x[base +: width]`, `x[base -: width]`.
    slice_expression: ($) =>
      prec(
        PREC.postfix,
        seq(
          field('value', $._expression),
          '[',
          field('left', $._expression),
          field('operator', choice(':', '+:', '-:')),
          field('right', $._expression),
          ']',
        ),
      ),

    // `{a, b}`: `a` in the most significant bits.
    concatenation_expression: ($) => seq('{', commaSep1($._expression), '}'),

    // `{4{b}}`, `{(N){a, b}}`.
    replication_expression: ($) =>
      seq(
        '{',
        field('count', choice($.integer_literal, $.parenthesized_expression)),
        '{',
        commaSep1($._expression),
        '}',
        '}',
      ),

    call_expression: ($) => prec(PREC.postfix, seq(field('function', $._expression), field('arguments', $.arguments))),

    builtin_call: ($) => seq(field('function', choice('trace', 'assert')), field('arguments', $.arguments)),

    arguments: ($) => seq('(', commaSep(choice($._expression, $.named_argument)), ')'),

    named_argument: ($) => seq(field('name', $.identifier), '=', field('value', $._expression)),

    some_expression: ($) => seq('Some', '(', $._expression, ')'),

    parenthesized_expression: ($) => seq('(', $._expression, ')'),

    array_expression: ($) =>
      seq('[', choice(commaSep($._expression), seq(field('value', $._expression), ';', field('length', $._expression))), ']'),

    struct_expression: ($) =>
      prec.dynamic(
        -1,
        seq(
          field('name', choice(alias($.identifier, $.type_identifier), $.scoped_identifier)),
          '{',
          commaSep($.field_initializer),
          '}',
        ),
      ),

    field_initializer: ($) => seq(field('name', $.identifier), ':', field('value', $._expression)),

    scoped_identifier: ($) => seq(field('scope', $.identifier), '::', field('name', $.identifier)),

    // --- literals ---

    integer_literal: (_) => token(seq(choice(/0x[0-9A-Fa-f_]+/, /0b[01_]+/, /\d[\d_]*/), optional(/[ui][0-9]+/))),

    boolean_literal: (_) => choice('true', 'false'),

    string_literal: ($) => seq('"', repeat(choice($.string_content, $.escape_sequence)), token.immediate('"')),

    string_content: (_) => token.immediate(prec(1, /[^"\\\n]+/)),

    escape_sequence: (_) => token.immediate(/\\["\\nt]/),

    identifier: (_) => /[A-Za-z_][A-Za-z0-9_]*/,
  },
});
