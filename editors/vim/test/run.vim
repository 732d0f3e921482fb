" Headless Vim check of the Chronon plugin: filetype detection, syntax groups
" and indentation (re-indenting formatter output must not change it).
" Run from the repository root: vim -Nu NONE -i NONE -Es -S editors/vim/test/run.vim
set nocompatible
let &runtimepath = getcwd() . '/editors/vim,' . &runtimepath
filetype plugin indent on
syntax on

let s:errors = []
let s:passed = 0
function! s:Check(ok, what) abort
  if a:ok
    let s:passed += 1
  else
    call add(s:errors, a:what)
  endif
endfunction

" Syntax group at the first match of `pattern` on line `lnum`.
function! s:GroupAt(lnum, pattern) abort
  let col = match(getline(a:lnum), a:pattern) + 1
  return synIDattr(synID(a:lnum, col, 1), 'name')
endfunction

for s:file in glob('tests/fmt/snapshots/*.snap', 0, 1)
  " The formatted text is what follows the second `---` line.
  let s:lines = readfile(s:file)
  let s:body = s:lines[index(s:lines, '---', 1) + 1 :]
  let s:target = tempname() . '.chr'
  call writefile(s:body, s:target)
  execute 'silent edit ' . fnameescape(s:target)
  call s:Check(&filetype ==# 'chr', s:file . ': filetype is ' . &filetype)
  normal! gg=G
  call s:Check(getline(1, '$') ==# s:body, s:file . ': re-indenting changed the formatted text')
  silent bwipeout!
endfor

let s:sample = [
      \ 'unit U {',
      \ '    reg r: u32; // note',
      \ '    tick {',
      \ '        r <= r + 1;',
      \ '        if r <= 3 { finish; }',
      \ '    }',
      \ '}',
      \ 'clock odd = 1000/3 MHz phase 1.5 ns; /* a /* nested */ b */',
      \ ]
let s:target = tempname() . '.chr'
call writefile(s:sample, s:target)
execute 'silent edit ' . fnameescape(s:target)
call s:Check(s:GroupAt(1, 'unit') ==# 'chrDeclaration', 'unit is chrDeclaration')
call s:Check(s:GroupAt(2, '//') ==# 'chrLineComment', '// starts a comment')
call s:Check(s:GroupAt(3, 'tick') ==# 'chrControl', 'tick is chrControl')
call s:Check(s:GroupAt(4, '<=') ==# 'chrRegisterWrite', '<= at a statement start writes a register')
call s:Check(s:GroupAt(5, '<=') ==# 'chrOperator', '<= in a condition compares')
call s:Check(s:GroupAt(8, '1000') ==# 'chrTime', '1000/3 MHz is a time literal')
call s:Check(s:GroupAt(8, 'MHz') ==# 'chrTimeUnit', 'MHz is a time unit')
call s:Check(s:GroupAt(8, ' b \*/') ==# 'chrBlockComment', 'block comments nest')
call s:Check(&commentstring ==# '// %s', 'commentstring')

" Silent Ex mode prints no messages: write the report to standard output.
call writefile(map(copy(s:errors), '"FAIL: " . v:val')
      \ + [printf('vim: %d passed, %d failed', s:passed, len(s:errors))], '/dev/stdout')
execute (empty(s:errors) ? 'qall!' : 'cquit!')
