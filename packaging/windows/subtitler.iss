; Inno Setup 6 script: setup.exe for the PyInstaller bundle in dist\subtitler.
;   iscc /DAppVersion=0.1.0 packaging\windows\subtitler.iss
;   iscc /DAppVersion=0.1.0 /DFlavor=-cuda ...      (a differently named CUDA build)
; VersionInfoVersion takes numbers only: NumVersion (default: AppVersion) is that part.
; (python packaging\build.py passes the version from pyproject.toml and the folders.)
; Per-user install by default (no administrator prompt); the user may choose all users.

#ifndef AppVersion
  #define AppVersion "0.0.0"
#endif
#ifndef NumVersion
  #define NumVersion AppVersion
#endif
#ifndef Flavor
  #define Flavor ""
#endif
#ifndef SourceDir
  #define SourceDir "..\..\dist\subtitler"
#endif
#ifndef OutputDir
  #define OutputDir "..\..\dist"
#endif
#define AppName "subtitler"
#define AppExe "subtitler.exe"

[Setup]
; AppId identifies the app for upgrades and the uninstaller: never change it.
AppId={{B28212B7-D7CD-4F36-A7B5-8270A5245672}
AppName={#AppName}
AppVersion={#AppVersion}
AppVerName={#AppName} {#AppVersion}{#Flavor}
AppPublisher=subtitler contributors
VersionInfoVersion={#NumVersion}
DefaultDirName={autopf}\{#AppName}
DefaultGroupName={#AppName}
DisableProgramGroupPage=yes
PrivilegesRequired=lowest
PrivilegesRequiredOverridesAllowed=dialog
ArchitecturesAllowed=x64compatible
ArchitecturesInstallIn64BitMode=x64compatible
OutputDir={#OutputDir}
OutputBaseFilename={#AppName}-{#AppVersion}{#Flavor}-windows-x64-setup
SetupIconFile=..\..\assets\icon.ico
; The project's licence, shown before installing; it and the third-party notices are in the
; installed folder too (_internal\subtitler\), and the app shows them under About.
LicenseFile=..\..\LICENSE
UninstallDisplayIcon={app}\{#AppExe}
UninstallDisplayName={#AppName}
Compression=lzma2
SolidCompression=yes
WizardStyle=modern
CloseApplications=yes

[Languages]
Name: "english"; MessagesFile: "compiler:Default.isl"

[Tasks]
Name: "desktopicon"; Description: "{cm:CreateDesktopIcon}"; GroupDescription: "{cm:AdditionalIcons}"; Flags: unchecked

[Files]
Source: "{#SourceDir}\*"; DestDir: "{app}"; Flags: ignoreversion recursesubdirs createallsubdirs

[Icons]
Name: "{group}\{#AppName}"; Filename: "{app}\{#AppExe}"
Name: "{group}\{cm:UninstallProgram,{#AppName}}"; Filename: "{uninstallexe}"
Name: "{autodesktop}\{#AppName}"; Filename: "{app}\{#AppExe}"; Tasks: desktopicon

[Run]
Filename: "{app}\{#AppExe}"; Description: "{cm:LaunchProgram,{#AppName}}"; Flags: nowait postinstall skipifsilent

[UninstallDelete]
; Files the app may write next to itself; settings, models and transcripts stay in the user's
; profile (delete %LOCALAPPDATA%\subtitler by hand to remove them).
Type: filesandordirs; Name: "{app}\_internal\__pycache__"
Type: filesandordirs; Name: "{app}\_internal\av\__pycache__"
