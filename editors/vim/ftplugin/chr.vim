" Vim filetype plugin
" Language: Chronon (.chr)

if exists('b:did_ftplugin')
  finish
endif
let b:did_ftplugin = 1

setlocal comments=s1:/*,mb:*,ex:*/,:// commentstring=//\ %s
setlocal formatoptions-=t formatoptions+=croql
setlocal expandtab shiftwidth=4 softtabstop=4 tabstop=4
setlocal foldmethod=syntax foldlevel=99
setlocal suffixesadd=.chr

" :ChrFmt rewrites the buffer in the canonical layout; on an error the
" buffer is left as it was and the diagnostic is shown.
function! s:ChrFmt() abort
  let view = winsaveview()
  let out = systemlist('chronc fmt -', getline(1, '$'))
  if v:shell_error
    echohl ErrorMsg | echo join(out, "\n") | echohl None
    return
  endif
  if out != getline(1, '$')
    silent! keepjumps %delete _
    call setline(1, out)
  endif
  call winrestview(view)
endfunction
command! -buffer ChrFmt call s:ChrFmt()

let b:undo_ftplugin = 'setlocal comments< commentstring< formatoptions< expandtab< shiftwidth< softtabstop< tabstop< foldmethod< foldlevel< suffixesadd<'
      \ . ' | silent! delcommand ChrFmt'
