" Vim indent file
" Language: Chronon (.chr)
" Four spaces per open bracket, as `chronc fmt` writes it.

if exists('b:did_indent')
  finish
endif
let b:did_indent = 1

setlocal indentexpr=GetChrIndent(v:lnum)
setlocal indentkeys=0{,0},0),0],!^F,o,O
setlocal nolisp nosmartindent autoindent

let b:undo_indent = 'setlocal indentexpr< indentkeys< lisp< smartindent< autoindent<'

if exists('*GetChrIndent')
  finish
endif

" The line without strings and comments, so their brackets do not count.
function! s:Code(lnum) abort
  let line = getline(a:lnum)
  let line = substitute(line, '"\(\\.\|[^"\\]\)*"', '""', 'g')
  let line = substitute(line, '/\*.\{-}\*/', '', 'g')
  return substitute(line, '//.*$', '', '')
endfunction

function! GetChrIndent(lnum) abort
  let prev = prevnonblank(a:lnum - 1)
  if prev == 0
    return 0
  endif
  let ind = indent(prev)
  let code = s:Code(prev)
  let opened = len(substitute(code, '[^{([]', '', 'g'))
  let closed = len(substitute(code, '[^})\]]', '', 'g'))
  " A line that starts by closing was already dedented for that bracket.
  let leading = len(substitute(matchstr(code, '^\s*[})\]]\+'), '\s', '', 'g'))
  let ind += shiftwidth() * (opened - (closed - leading))
  if getline(a:lnum) =~# '^\s*[})\]]'
    let ind -= shiftwidth()
  endif
  return ind < 0 ? 0 : ind
endfunction
