# bash completion of nhens: subcommands, their options, and the names of systems, methods, presets and
# observers, all asked of the program itself (nhens list --names KIND), so plugins loaded with --plugin on
# the command line are completed too. Installed to share/bash-completion/completions/nhens.
_nhens_names()
{
    local plugins=() i
    for ((i = 1; i < COMP_CWORD; i++)); do
        if [[ ${COMP_WORDS[i]} == --plugin ]]; then plugins+=(--plugin "${COMP_WORDS[i + 1]}"); fi
    done
    "${COMP_WORDS[0]}" "${plugins[@]}" list --names "$1" 2>/dev/null
}

_nhens()
{
    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]} command="" i
    for ((i = 1; i < COMP_CWORD; i++)); do
        case ${COMP_WORDS[i]} in
            --plugin) ((i++)) ;;
            -*) ;;
            *) command=${COMP_WORDS[i]}; break ;;
        esac
    done
    case $prev in
        --system) COMPREPLY=($(compgen -W "$(_nhens_names systems)" -- "$cur")); return ;;
        --method) COMPREPLY=($(compgen -W "$(_nhens_names methods)" -- "$cur")); return ;;
        --preset) COMPREPLY=($(compgen -W "$(_nhens_names presets)" -- "$cur")); return ;;
        --observe) COMPREPLY=($(compgen -W "$(_nhens_names observers) all" -- "$cur")); return ;;
        --solver) COMPREPLY=($(compgen -W "kinsol newton" -- "$cur")); return ;;
        --names) COMPREPLY=($(compgen -W "commands systems methods presets observers" -- "$cur")); return ;;
        --out | --initial | --resume | --plugin) COMPREPLY=($(compgen -f -- "$cur")); return ;;
    esac
    if [[ -z $command ]]; then
        COMPREPLY=($(compgen -W "$(_nhens_names commands) help --version --plugin" -- "$cur"))
    elif [[ $command == help ]]; then
        COMPREPLY=($(compgen -W "$(_nhens_names commands)" -- "$cur"))
    elif [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$(_nhens_names "options:$command") --help" -- "$cur"))
    else
        COMPREPLY=($(compgen -f -- "$cur"))   # experiment files, partial results
    fi
}
complete -F _nhens nhens
