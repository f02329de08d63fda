<#
.SYNOPSIS
    pintle-run-orders for Windows (DSC) nodes: the pull channel of a Rudder node to its Pintle policy server.

.DESCRIPTION
    The Windows twin of deploy/node/pintle-run-orders (see its header and deploy/node/README.md). It loops:

      GET  https://<server>:<port>/rudder/relay-api/remote-run/orders?wait=300
           200: one line "<order> <command>[ <conditions>]"; 204: the wait ran out, poll again at once
      PUT  https://<server>:<port>/rudder/relay-api/remote-run/orders/<order>
           the agent's output as it comes, then an empty line and "<order> exit <code>"

    with the node's agent certificate and the server's key pinned. HTTP goes through curl.exe, the one Rudder's
    Windows agent ships (C:\Program Files\Rudder\bin\curl.exe, OpenSSL-based): it reads the agent's PEM key with
    its passphrase and pins the server key with --pinnedpubkey, neither of which Windows PowerShell 5.1's
    Invoke-WebRequest/HttpClient (.NET Framework) can do without converting the key to a PFX. -Curl names another
    one (Windows' own System32\curl.exe is Schannel-based and cannot read a PEM key).

    An order runs exactly one of: <AgentCommand> agent run -uR | agent update | agent inventory, with -D a,b when
    the order has conditions, stopped at the order's Pintle-Run-Timeout header (the server's [remote_run]
    timeout; -RunTimeout seconds when absent) (exit 124, reported as "timeout"). Any other line is
    refused and logged, never run; a refused order with a well-formed id is reported as refused (exit 2).

    Paths: C:\Program Files\Rudder\etc\policy-server.conf, etc\uuid.hive, etc\ssl\localhost.cert,
    etc\ssl\localhost.priv (passphrase "Rudder-dsc passphrase") and bin\curl.exe are where Rudder's own Windows
    tests and relay API examples find them; the agent command (bin\rudder.exe here) and the pin's location could
    not be checked against the Windows agent, whose sources are not public: pass -AgentCommand and -Pin (or
    -PinFile) when they differ. Nothing here was run on Windows; its HTTP exchange is replayed by
    NodeOrdersWindowsExchangeIT from server/src/test/resources/node-orders/windows-exchange.txt.

.EXAMPLE
    powershell.exe -NoProfile -ExecutionPolicy Bypass -File pintle-run-orders.ps1 -Install -Pin 'sha256//...'
    Registers the scheduled task "Pintle run orders" (at startup, as SYSTEM, restarted on failure) with these
    parameters. -Uninstall removes it.
#>
[CmdletBinding()]
param(
    [string]$RudderBase = 'C:\Program Files\Rudder',
    [string]$Server = '',
    [int]$Port = 443,
    [string]$Pin = '',
    [string]$PinFile = '',
    [string]$Certificate = '',
    [string]$Key = '',
    [string]$KeyPassphrase = 'Rudder-dsc passphrase',
    [string]$AgentCommand = '',
    [string]$Curl = '',
    [ValidateRange(1, 86400)][int]$RunTimeout = 300,
    [ValidateRange(1, 300)][int]$Wait = 300,
    [ValidateRange(1, 3600)][int]$MaxBackoff = 60,
    [switch]$Install,
    [switch]$Uninstall
)

Set-StrictMode -Version 2.0
$ErrorActionPreference = 'Stop'
$TaskName = 'Pintle run orders'
$OrdersPath = '/rudder/relay-api/remote-run/orders'

function Write-Log([string]$Message) {
    # Standard error: the scheduled task's log, or the console. Never a key, never the agent's output.
    [Console]::Error.WriteLine("pintle-run-orders: $Message")
}

if ($Uninstall) {
    Unregister-ScheduledTask -TaskName $TaskName -Confirm:$false
    return
}

if (-not $Certificate) { $Certificate = Join-Path $RudderBase 'etc\ssl\localhost.cert' }
if (-not $Key) { $Key = Join-Path $RudderBase 'etc\ssl\localhost.priv' }
if (-not $AgentCommand) { $AgentCommand = Join-Path $RudderBase 'bin\rudder.exe' }
if (-not $Curl) { $Curl = Join-Path $RudderBase 'bin\curl.exe' }
if (-not $Server) {
    $conf = Join-Path $RudderBase 'etc\policy-server.conf'
    if (Test-Path -LiteralPath $conf) { $Server = (Get-Content -LiteralPath $conf -TotalCount 1).Trim() }
}
if (-not $Pin -and $PinFile -and (Test-Path -LiteralPath $PinFile)) {
    $Pin = (Get-Content -LiteralPath $PinFile -TotalCount 1).Trim()
}
if (-not $Server -or $Server -notmatch '^[A-Za-z0-9.:_\[\]-]+$') { throw "no valid policy server (-Server or $RudderBase\etc\policy-server.conf)" }
if (-not $Pin -or $Pin -notmatch '^sha256//[A-Za-z0-9+/=]+(;sha256//[A-Za-z0-9+/=]+)*$') { throw 'no valid pin of the server key (-Pin or -PinFile: sha256//<base64>)' }
foreach ($file in @($Certificate, $Key, $Curl)) {
    if (-not (Test-Path -LiteralPath $file)) { throw "missing $file" }
}

if ($Install) {
    $arguments = @('-NoProfile', '-NonInteractive', '-ExecutionPolicy', 'Bypass', '-File', "`"$PSCommandPath`"",
        '-RudderBase', "`"$RudderBase`"", '-Server', $Server, '-Port', $Port, '-Pin', $Pin,
        '-Certificate', "`"$Certificate`"", '-Key', "`"$Key`"", '-AgentCommand', "`"$AgentCommand`"",
        '-Curl', "`"$Curl`"", '-RunTimeout', $RunTimeout) -join ' '
    $action = New-ScheduledTaskAction -Execute 'powershell.exe' -Argument $arguments
    $trigger = New-ScheduledTaskTrigger -AtStartup
    $principal = New-ScheduledTaskPrincipal -UserId 'SYSTEM' -LogonType ServiceAccount -RunLevel Highest
    # No time limit; restarted every minute if it ever stops, as systemd's Restart=always.
    $settings = New-ScheduledTaskSettingsSet -ExecutionTimeLimit ([TimeSpan]::Zero) -RestartCount 9999 `
        -RestartInterval (New-TimeSpan -Minutes 1) -StartWhenAvailable -AllowStartIfOnBatteries `
        -DontStopIfGoingOnBatteries
    Register-ScheduledTask -TaskName $TaskName -Action $action -Trigger $trigger -Principal $principal `
        -Settings $settings -Force | Out-Null
    Start-ScheduledTask -TaskName $TaskName
    Write-Log "installed and started the scheduled task '$TaskName'"
    return
}

$Url = "https://${Server}:$Port$OrdersPath"
$State = Join-Path $env:ProgramData 'pintle-run-orders'
New-Item -ItemType Directory -Force -Path $State | Out-Null

# curl's arguments every call shares: rudder-client's (TLS 1.3, 10 s to connect, pinned key, the agent's
# certificate), without --fail (the status is wanted) and --location (an order is never redirected).
function Get-CurlBase {
    return @('--tlsv1.3', '--silent', '--show-error', '--connect-timeout', '10', '--noproxy', '*',
        '--pinnedpubkey', $Pin, '--insecure', '--cert', "${Certificate}:$KeyPassphrase", '--key', $Key)
}

function Join-Arguments([string[]]$Arguments) {
    # Windows hands a process one command line: quote each argument (none of ours holds a double quote).
    return ($Arguments | ForEach-Object { if ($_ -match '[\s;]' -or $_ -eq '') { "`"$_`"" } else { $_ } }) -join ' '
}

# Validates an order line as the Linux client does; returns @{ Order; Command; Conditions; Reason }.
function Read-OrderLine([string]$Line) {
    $result = @{ Order = $null; Command = $null; Conditions = ''; Reason = $null }
    $first = ($Line -split ' ', 2)[0]
    if ($first -cmatch '^[0-9a-f]{32}$') { $result.Order = $first }
    if ($Line.Length -gt 2048) { $result.Reason = 'the order line is longer than 2048 bytes'; return $result }
    if ($Line -cnotmatch '^[A-Za-z0-9_, ]*$') { $result.Reason = 'the order line holds a character outside [A-Za-z0-9_, ]'; return $result }
    if (-not $result.Order) { $result.Reason = 'the order id must be 32 lowercase hexadecimal digits'; return $result }
    $fields = @($Line -split ' ')
    if ($fields.Count -lt 2 -or $fields.Count -gt 3) { $result.Reason = "expected '<order> <command>[ <conditions>]'"; return $result }
    if (@('run', 'update', 'inventory') -cnotcontains $fields[1]) { $result.Reason = 'the command must be run, update or inventory'; return $result }
    $result.Command = $fields[1]
    if ($fields.Count -eq 3) {
        if ($fields[2].Length -gt 1024 -or $fields[2] -cnotmatch '^[A-Za-z0-9][A-Za-z0-9_]*(,[A-Za-z0-9][A-Za-z0-9_]*)*$') {
            $result.Reason = 'conditions must be a,b,c with each [A-Za-z0-9][A-Za-z0-9_]*'; return $result
        }
        $result.Conditions = $fields[2]
    }
    return $result
}

# Starts curl's PUT of one order's report, its body read from standard input as it comes (curl -T -).
function Start-Report([string]$Order, [int]$Timeout) {
    $info = New-Object System.Diagnostics.ProcessStartInfo
    $info.FileName = $Curl
    $info.Arguments = Join-Arguments ((Get-CurlBase) + @('--max-time', ($Timeout + 60), '--request', 'PUT',
            '--upload-file', '-', '--header', 'Content-Type: text/plain; charset=utf-8', '--output',
            (Join-Path $State 'report'), '--write-out', '%{http_code}', "$Url/$Order"))
    $info.UseShellExecute = $false
    $info.RedirectStandardInput = $true
    $info.RedirectStandardOutput = $true
    $info.RedirectStandardError = $true
    $process = [System.Diagnostics.Process]::Start($info)
    $process.StandardInput.AutoFlush = $true
    $process.StandardInput.NewLine = "`n"
    return $process
}

function Invoke-Order($Parsed) {
    $argv = switch ($Parsed.Command) {
        'run' { @('agent', 'run', '-uR') }
        'update' { @('agent', 'update') }
        'inventory' { @('agent', 'inventory') }
    }
    if ($Parsed.Conditions) { $argv += @('-D', $Parsed.Conditions) }
    # The server's [remote_run] timeout, when the order says it: the agent stops when the server stops waiting.
    $timeout = $RunTimeout
    $header = Select-String -LiteralPath $headerFile -Pattern '^Pintle-Run-Timeout: *([0-9]{1,5})\s*$' | Select-Object -First 1
    if ($header -and [int]$header.Matches[0].Groups[1].Value -ge 1 -and [int]$header.Matches[0].Groups[1].Value -le 86400) {
        $timeout = [int]$header.Matches[0].Groups[1].Value
    }
    $report = Start-Report $Parsed.Order $timeout
    $started = Get-Date
    $info = New-Object System.Diagnostics.ProcessStartInfo
    $info.FileName = $AgentCommand
    $info.Arguments = Join-Arguments $argv
    $info.UseShellExecute = $false
    $info.RedirectStandardOutput = $true
    $info.RedirectStandardError = $true
    $agent = New-Object System.Diagnostics.Process
    $agent.StartInfo = $info
    # Output and error merged, line by line, as they come; a broken report does not stop the agent.
    $lines = New-Object 'System.Collections.Concurrent.BlockingCollection[string]'
    $handler = { if ($null -ne $EventArgs.Data) { $Event.MessageData.Add($EventArgs.Data) } }
    $out = Register-ObjectEvent -InputObject $agent -EventName OutputDataReceived -Action $handler -MessageData $lines
    $err = Register-ObjectEvent -InputObject $agent -EventName ErrorDataReceived -Action $handler -MessageData $lines
    $code = 127
    try {
        [void]$agent.Start()
        $agent.BeginOutputReadLine()
        $agent.BeginErrorReadLine()
        $deadline = $started.AddSeconds($timeout)
        $timedOut = $false
        while (-not $agent.HasExited -or $lines.Count -gt 0) {
            $line = $null
            if ($lines.TryTake([ref]$line, 200)) {
                try { $report.StandardInput.WriteLine($line) } catch { }
            }
            if (-not $agent.HasExited -and (Get-Date) -gt $deadline) {
                $timedOut = $true
                & taskkill.exe /T /F /PID $agent.Id | Out-Null
            }
        }
        $agent.WaitForExit()
        # WaitForExit() returns once the output readers reached their end: what they queued last goes out too.
        $line = $null
        while ($lines.TryTake([ref]$line, 0)) {
            try { $report.StandardInput.WriteLine($line) } catch { }
        }
        $code = if ($timedOut) { 124 } else { $agent.ExitCode }
    } catch {
        try { $report.StandardInput.WriteLine("pintle-run-orders: the agent did not start: $($_.Exception.Message)") } catch { }
    } finally {
        Unregister-Event -SourceIdentifier $out.Name
        Unregister-Event -SourceIdentifier $err.Name
    }
    try {
        $report.StandardInput.Write("`n$($Parsed.Order) exit $code`n")
        $report.StandardInput.Close()
    } catch { }
    $status = $report.StandardOutput.ReadToEnd()
    $report.WaitForExit()
    $took = [int]((Get-Date) - $started).TotalSeconds
    $what = $Parsed.Command + $(if ($Parsed.Conditions) { " -D $($Parsed.Conditions)" } else { '' })
    if ($report.ExitCode -eq 0 -and $status -eq '204') {
        Write-Log "order $($Parsed.Order) ($what): agent exit $code after $took s, reported"
    } else {
        Write-Log "order $($Parsed.Order) ($what): agent exit $code after $took s, report FAILED (curl exit $($report.ExitCode), HTTP $status)"
    }
}

function Send-Refusal($Parsed) {
    $report = Start-Report $Parsed.Order
    try {
        $report.StandardInput.Write("pintle-run-orders: refused: $($Parsed.Reason)`n`n$($Parsed.Order) exit 2`n")
        $report.StandardInput.Close()
    } catch { }
    [void]$report.StandardOutput.ReadToEnd()
    $report.WaitForExit()
}

$backoff = 0
$random = New-Object System.Random
function Wait-Backoff {
    if ($script:backoff -eq 0) { $script:backoff = 1 } else { $script:backoff = [Math]::Min($script:backoff * 2, $MaxBackoff) }
    Start-Sleep -Milliseconds ($script:backoff * 1000 + $random.Next(0, $script:backoff * 250 + 1))
}

function Get-ProblemDetail([string]$File) {
    try { return ((Get-Content -LiteralPath $File -Raw | ConvertFrom-Json).detail -replace '[^\x20-\x7e]', '') } catch { return '' }
}

Write-Log "started: polling $Url, agent timeout $RunTimeout s"
$orderFile = Join-Path $State 'order'
$headerFile = Join-Path $State 'headers'
$errorFile = Join-Path $State 'error'
while ($true) {
    Remove-Item -LiteralPath $orderFile, $headerFile -ErrorAction SilentlyContinue
    # curl's messages go to a file (--stderr): under ErrorActionPreference=Stop, Windows PowerShell 5.1 turns a
    # native command's redirected standard error into a terminating error.
    $arguments = (Get-CurlBase) + @('--max-time', ($Wait + 30), '--dump-header', $headerFile, '--output', $orderFile,
        '--stderr', $errorFile, '--write-out', '%{http_code}', "${Url}?wait=$Wait")
    $http = & $Curl @arguments
    $rc = $LASTEXITCODE
    if ($rc -ne 0) {
        $message = Get-Content -LiteralPath $errorFile -TotalCount 1 -ErrorAction SilentlyContinue
        Write-Log "poll of $Url failed: curl exit ${rc}: $("$message" -replace '[^\x20-\x7e]', '')"
        Wait-Backoff
        continue
    }
    switch ("$http") {
        '204' { $backoff = 0 }
        '200' {
            $backoff = 0
            $bytes = [System.IO.File]::ReadAllBytes($orderFile)
            $text = [System.Text.Encoding]::ASCII.GetString($bytes)
            if ($bytes.Length -gt 2049 -or -not $text.EndsWith("`n") -or $text.IndexOf("`n") -ne $text.Length - 1) {
                Write-Log "order REFUSED, not run: the answer is not one line ending in a newline ($($bytes.Length) bytes)"
                break
            }
            $parsed = Read-OrderLine $text.TrimEnd("`n")
            if ($parsed.Reason) {
                Write-Log "order REFUSED, not run: $($parsed.Reason)"
                if ($parsed.Order) { Send-Refusal $parsed }
            } else {
                Invoke-Order $parsed
            }
        }
        '503' {
            $retry = Select-String -LiteralPath $headerFile -Pattern '^Retry-After: *([0-9]{1,5})\s*$' | Select-Object -First 1
            Write-Log "poll of ${Url}: HTTP 503: $(Get-ProblemDetail $orderFile)"
            if ($retry -and [int]$retry.Matches[0].Groups[1].Value -le 300) {
                Start-Sleep -Seconds ([int]$retry.Matches[0].Groups[1].Value)
            } else {
                Wait-Backoff
            }
        }
        default {
            Write-Log "poll of ${Url}: HTTP ${http}: $(Get-ProblemDetail $orderFile)"
            Wait-Backoff
        }
    }
}
