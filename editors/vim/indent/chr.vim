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
  let line = substitute(line, '^.*\*/', '', '')
  let line = substitute(line, '/\*.*$', '', '')
  return substitute(line, '//.*$', '', '')
endfunction

" Whether the line is inside a block comment that began on an earlier line.
" Leading blanks belong to a comment region only inside one.
function! s:InComment(lnum) abort
  return getline(a:lnum) =~# '^\s\|^\%(/\*\)\@!'
        \ && synIDattr(synID(a:lnum, 1, 1), 'name') ==# 'chrBlockComment'
endfunction

" The nearest earlier line with code or a comment of its own.
function! s:PrevLine(lnum) abort
  let lnum = prevnonblank(a:lnum - 1)
  while lnum > 0 && s:InComment(lnum)
    let lnum = prevnonblank(lnum - 1)
  endwhile
  return lnum
endfunction

" Whether the line continues a statement broken by a comment: the line
" before it ends neither a statement nor a list element nor opens a bracket.
function! s:Continues(lnum) abort
  if getline(a:lnum) =~# '^\s*[})\]]'
    return 0
  endif
  let prev = s:PrevLine(a:lnum)
  if prev == 0
    return 0
  endif
  let code = trim(s:Code(prev))
  return code !=# '' && code !~# '[;{}(\[,]$'
endfunction

function! GetChrIndent(lnum) abort
  if s:InComment(a:lnum)
    return -1
  endif
  let prev = s:PrevLine(a:lnum)
  if prev == 0
    return 0
  endif
  let ind = indent(prev)
  if s:Continues(prev)
    let ind -= shiftwidth()
  endif
  let code = s:Code(prev)
  let opened = len(substitute(code, '[^{([]', '', 'g'))
  let closed = len(substitute(code, '[^})\]]', '', 'g'))
  " A line that starts by closing was already dedented for that bracket.
  let leading = len(substitute(matchstr(code, '^\s*[})\]]\+'), '\s', '', 'g'))
  let ind += shiftwidth() * (opened - (closed - leading))
  if getline(a:lnum) =~# '^\s*[})\]]'
    let ind -= shiftwidth()
  endif
  if s:Continues(a:lnum)
    let ind += shiftwidth()
  endif
  return ind < 0 ? 0 : ind
endfunction
