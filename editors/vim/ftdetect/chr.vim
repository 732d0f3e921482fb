" Chronon hardware designs.
autocmd BufRead,BufNewFile *.chr setfiletype chr
