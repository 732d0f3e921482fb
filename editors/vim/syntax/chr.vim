" Vim syntax file
" Language: Chronon (.chr)
" The keyword list is checked against the compiler's grammar by tests/editors.rs.

if exists('b:current_syntax')
  finish
endif

syn keyword chrDeclaration use const clock struct enum fn unit system reg stage counter inst let
syn keyword chrControl tick if else match for while return finish
syn keyword chrPort in out cdc fwft rate pipes phase
syn keyword chrConnect on connect latency capacity depth sync
syn keyword chrOperatorWord as
syn keyword chrBuiltin assert trace
syn keyword chrBoolean true false
syn keyword chrOption Some None

syn match chrType "\<\(bool\|[ui]\d\+\)\>"
syn match chrType "\<[ui]\ze<"
syn match chrTypeName "\<\(unit\|system\|struct\|enum\)\s\+\zs\h\w*"
syn match chrFunctionName "\<fn\s\+\zs\h\w*"

syn match chrNumber "\<\d[0-9_]*\([ui]\d\+\)\=\>"
syn match chrNumber "\<0x[0-9A-Fa-f_]\+\([ui]\d\+\)\=\>"
syn match chrNumber "\<0b[01_]\+\([ui]\d\+\)\=\>"

syn match chrOperator "->\|=>\|==\|!=\|>=\|&&\|||\|<<\|>>\|+=\|-=\|\.\.=\?\|::"
syn match chrOperator "[-+*/%<>=!~&|^]"

" Later items win where several start at one column: these come after the
" plain numbers and operators they refine.
" Time literals: a decimal or an exact ratio, then a unit.
syn match chrTime "\<\d[0-9_]*\(\.\d[0-9_]*\)\=\(\s*/\s*\d[0-9_]*\)\=\s*\(Hz\|kHz\|MHz\|GHz\|fs\|ps\|ns\|us\|ms\|s\)\>" contains=chrTimeUnit
syn match chrTimeUnit "\<\(Hz\|kHz\|MHz\|GHz\|fs\|ps\|ns\|us\|ms\|s\)\>" contained
" `target <= value;` at the start of a statement writes a register.
syn match chrRegisterWrite "\(^\|[;{}]\)\s*\h\w*\(\s*\(\.\h\w*\|\[[^]]*\]\)\)*\s*\zs<="

syn region chrString start=+"+ skip=+\\\\\|\\"+ end=+"+ oneline contains=chrEscape
syn match chrEscape +\\["\\nt]+ contained

syn keyword chrTodo TODO FIXME XXX NOTE contained
syn match chrLineComment "//.*$" contains=chrTodo,@Spell
syn region chrBlockComment start="/\*" end="\*/" contains=chrBlockComment,chrTodo,@Spell fold

syn region chrBlock start="{" end="}" transparent fold

hi def link chrDeclaration Keyword
hi def link chrControl Conditional
hi def link chrPort StorageClass
hi def link chrConnect Keyword
hi def link chrOperatorWord Operator
hi def link chrBuiltin Function
hi def link chrBoolean Boolean
hi def link chrOption Constant
hi def link chrType Type
hi def link chrTypeName Typedef
hi def link chrFunctionName Function
hi def link chrTime Number
hi def link chrTimeUnit Special
hi def link chrNumber Number
hi def link chrRegisterWrite Statement
hi def link chrOperator Operator
hi def link chrString String
hi def link chrEscape SpecialChar
hi def link chrTodo Todo
hi def link chrLineComment Comment
hi def link chrBlockComment Comment

let b:current_syntax = 'chr'
